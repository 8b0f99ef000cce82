/**
 * Runs the uvu suites: every `*.test.ts` under test/, or under the folders or files given as
 * arguments. Each file runs in its own process, `PLAZA_TEST_JOBS` (default 3) at a time, largest
 * first; a file's output is printed whole when it ends. Closes with one `N passed, N failed` line
 * and exits non-zero when any test failed or no test ran. `--one FILE` is the child's mode.
 */
import { spawn } from 'node:child_process'
import { statSync } from 'node:fs'
import path from 'node:path'
import { parse } from 'uvu/parse'
import { run } from 'uvu/run'

const ANSI = /\x1b\[[0-9;]*m/g
const counts = (output: string) => {
  const plain = output.replace(ANSI, '')
  const read = (label: string) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(plain)?.[1] ?? 0)
  return { total: read('Total'), passed: read('Passed'), skipped: read('Skipped') }
}

async function runOne(file: string) {
  const dir = path.dirname(file)
  const { suites } = await parse(dir, new RegExp(`^${path.basename(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`), {})
  await run(suites, { bail: false })
  // uvu has printed its totals; leave even if a test left a handle open.
  process.exit(0)
}

async function testFiles(targets: string[]): Promise<string[]> {
  const files: string[] = []
  for (const target of targets) {
    if (statSync(target).isFile()) files.push(path.resolve(target))
    else files.push(...(await parse(target, /\.test\.ts$/, {})).suites.map((suite) => suite.file))
  }
  return [...new Set(files)]
}

function runChild(file: string): Promise<{ output: string; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', process.argv[1], '--one', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: process.stdout.isTTY ? '1' : '0' } })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    child.on('close', (code) => resolve({ output, code }))
  })
}

async function main() {
  const args = process.argv.slice(2)
  if (args[0] === '--one') return runOne(args[1])
  const files = (await testFiles(args.length ? args : ['test'])).sort((a, b) => statSync(b).size - statSync(a).size)
  const jobs = Math.max(1, Number(process.env.PLAZA_TEST_JOBS) || 3)
  const root = path.resolve('test')
  let passed = 0
  let failed = 0
  let skipped = 0
  const queue = [...files]
  const started = Date.now()
  await Promise.all(
    Array.from({ length: Math.min(jobs, files.length) }, async () => {
      for (let file = queue.shift(); file; file = queue.shift()) {
        const t0 = Date.now()
        const { output, code } = await runChild(file)
        const result = counts(output)
        // A file that crashed before uvu printed its totals counts as one failure.
        const crashed = code !== 0 || result.total === 0
        passed += result.passed
        skipped += result.skipped
        failed += result.total - result.passed - result.skipped + (crashed && result.total === result.passed ? 1 : 0)
        process.stdout.write(`\n[${path.relative(root, file)}, ${((Date.now() - t0) / 1000).toFixed(1)} s]\n${output.replace(/\n\s*Total:[\s\S]*$/, '')}\n`)
      }
    }),
  )
  console.log(`\n${files.length} files in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
  process.exit(passed + skipped === 0 || failed > 0 ? 1 : 0)
}

await main()
