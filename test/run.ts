/**
 * Runs the uvu suites: every `*.test.ts` under test/, or under the folders or files given as
 * arguments. Each file runs in its own process, `PLAZA_TEST_JOBS` (default 3) at a time, the
 * costliest first by the wall times recorded in test/costs.json (files it does not know go first,
 * largest first), so the long files start early and the short ones fill in behind them; a file's
 * output is printed whole when it ends, with its wall time and the CPU it used (its threads and
 * the processes it waited for). `PLAZA_TEST_RECORD=1` writes this run's costs to test/costs.json.
 * The answers the files' test servers gave are recorded (test/helpers/recorder.ts) and, once every
 * file has run, checked against the OpenAPI document by test/server/recorded-answers.ts, counted
 * like a file of its own. Closes with one `N passed, N failed` line and exits non-zero when any
 * test failed or no test ran. `--one FILE` is the child's mode.
 *
 * The children run the suite compiled once to JavaScript (test/compile.ts) with plain node, not
 * under tsx's loader hooks, which cost each process and worker thread most of a second of CPU.
 *
 * Password hashes cost 2^10 rather than 2^15 here (`PLAZA_PASSWORD_COST=10` unless set): the
 * same scrypt, a 32nd of the work; test/server/auth.test.ts checks the production default.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'uvu/parse'
import { run } from 'uvu/run'
import type { CompiledSuite } from './compile.js'

const ANSI = /\x1b\[[0-9;]*m/g
const counts = (output: string) => {
  const plain = output.replace(ANSI, '')
  const read = (label: string) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(plain)?.[1] ?? 0)
  return { total: read('Total'), passed: read('Passed'), skipped: read('Skipped') }
}

const COSTS = path.resolve('test/costs.json')
const CPU_MARK = /^\[cpu ([0-9.]+) s\]$/m

/** CPU seconds this process used, its threads and the children it waited for included (Linux; 0 elsewhere). */
function cpuSeconds(): number {
  try {
    // /proc/self/stat: fields 14-17 are utime, stime, cutime, cstime in clock ticks (100 a second on Linux).
    const fields = readFileSync('/proc/self/stat', 'utf8').replace(/^.*\) /, '').split(' ')
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100
  } catch {
    return 0
  }
}

async function runOne(file: string) {
  const dir = path.dirname(file)
  const { suites } = await parse(dir, new RegExp(`^${path.basename(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`), {})
  await run(suites, { bail: false })
  process.stdout.write(`\n[cpu ${cpuSeconds().toFixed(1)} s]\n`)
  // uvu has printed its totals; leave even if a test left a handle open.
  process.exit(0)
}

type Costs = Record<string, { wall: number; cpu: number }>

function readCosts(): Costs {
  return existsSync(COSTS) ? (JSON.parse(readFileSync(COSTS, 'utf8')) as Costs) : {}
}

async function testFiles(targets: string[]): Promise<string[]> {
  const files: string[] = []
  for (const target of targets) {
    if (statSync(target).isFile()) files.push(path.resolve(target))
    else files.push(...(await parse(target, /\.test\.ts$/, {})).suites.map((suite) => suite.file))
  }
  return [...new Set(files)]
}

/** Runs one compiled test file in a process of its own, in the compiled copy's root (`suite`). */
function runChild(suite: CompiledSuite, file: string): Promise<{ output: string; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--enable-source-maps', suite.compiled(fileURLToPath(import.meta.url)), '--one', suite.compiled(file)], {
      cwd: suite.root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PLAZA_PASSWORD_COST: '10', ...process.env, FORCE_COLOR: process.stdout.isTTY ? '1' : '0' },
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    child.on('close', (code) => resolve({ output, code }))
  })
}

/** Checks the recorded answers after the files have run (not a `*.test.ts`, so never picked as one). */
const RECORDED_CHECK = path.resolve('test/server/recorded-answers.ts')

async function main() {
  const args = process.argv.slice(2)
  if (args[0] === '--one') return runOne(args[1])
  // The children's answers, for the contract check; a directory named by the caller is kept.
  const ownAnswersDir = !process.env.PLAZA_TEST_ANSWERS_DIR
  process.env.PLAZA_TEST_ANSWERS_DIR ??= mkdtempSync(path.join(tmpdir(), 'plaza-answers-'))
  const answersDir = process.env.PLAZA_TEST_ANSWERS_DIR
  const root = path.resolve('test')
  const costs = readCosts()
  const known = (file: string) => costs[path.relative(root, file)]?.wall
  const files = (await testFiles(args.length ? args : ['test'])).sort(
    (a, b) => (known(b) ?? Infinity) - (known(a) ?? Infinity) || statSync(b).size - statSync(a).size,
  )
  const jobs = Math.max(1, Number(process.env.PLAZA_TEST_JOBS) || 3)
  const { compileSuite } = await import('./compile.js')
  const suite = await compileSuite(path.resolve('.'))
  const measured: Costs = {}
  let passed = 0
  let failed = 0
  let skipped = 0
  const queue = [...files]
  const started = Date.now()
  const runFile = async (file: string) => {
    const t0 = Date.now()
    const { output, code } = await runChild(suite, file)
    const wall = (Date.now() - t0) / 1000
    const cpu = Number(CPU_MARK.exec(output)?.[1] ?? 0)
    measured[path.relative(root, file)] = { wall: Math.round(wall * 10) / 10, cpu }
    const result = counts(output)
    // A file that crashed before uvu printed its totals counts as one failure.
    const crashed = code !== 0 || result.total === 0
    passed += result.passed
    skipped += result.skipped
    failed += result.total - result.passed - result.skipped + (crashed && result.total === result.passed ? 1 : 0)
    process.stdout.write(`\n[${path.relative(root, file)}, ${wall.toFixed(1)} s, cpu ${cpu.toFixed(1)} s]\n${output.replace(/\n\s*Total:[\s\S]*$/, '')}\n`)
  }
  await Promise.all(
    Array.from({ length: Math.min(jobs, files.length) }, async () => {
      for (let file = queue.shift(); file; file = queue.shift()) await runFile(file)
    }),
  )
  if (readdirSync(answersDir).length > 0) await runFile(RECORDED_CHECK)
  if (ownAnswersDir) rmSync(answersDir, { recursive: true, force: true })
  suite.remove()
  const cpu = Object.values(measured).reduce((sum, cost) => sum + cost.cpu, 0)
  console.log(`\n${files.length} files in ${((Date.now() - started) / 1000).toFixed(1)} s, ${cpu.toFixed(0)} s of CPU`)
  if (process.env.PLAZA_TEST_RECORD === '1') {
    const sorted = Object.fromEntries(Object.entries({ ...costs, ...measured }).sort(([a], [b]) => a.localeCompare(b)))
    writeFileSync(COSTS, `${JSON.stringify(sorted, null, 1)}\n`)
  }
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
  process.exit(passed + skipped === 0 || failed > 0 ? 1 : 0)
}

await main()
