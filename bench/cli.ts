/**
 * CLI start-up benchmark: the wall time of a spawned `plaza social whoami`, embedded (opens the
 * local database in-process) and remote (against a `plaza serve` started here), beside baselines
 * measured in the same run: a bare `node -e 0` process and `plaza --version` (oclif alone). The
 * cases run interleaved (A, B, C, D, A, B, ...), so a burst of load on the machine hits all alike;
 * medians and 90th percentiles.
 *
 *   npm run build && npx tsx bench/cli.ts [runs]
 *
 * PLAZA_BENCH_BASELINE=/path/to/other/checkout (built) adds that build's `--version` and embedded
 * and remote `whoami` to the same interleaved run, on the same data and server: before/after figures.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServe } from '../test/helpers/cli.js'

const RUNS = Number(process.argv[2] ?? 21)
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BIN = path.join(ROOT, 'bin/run.js')
const scratch = mkdtempSync(path.join(tmpdir(), 'plaza-bench-cli-'))
const dataDir = path.join(scratch, 'data')
const baseEnv = { PATH: process.env.PATH, HOME: process.env.HOME, XDG_CONFIG_HOME: path.join(scratch, 'config') }

/** Spawns and times one process (asynchronously: the server answering the remote case lives in this process). */
function run(args: string[], env: NodeJS.ProcessEnv = {}, input = ''): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const child = spawn(process.execPath, args, { env: { ...baseEnv, ...env }, stdio: ['pipe', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => {
      const ms = performance.now() - start
      if (code === 0) resolve(ms)
      else reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`))
    })
    child.stdin.end(input)
  })
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** The nearest-rank 90th percentile. */
const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.9) - 1]

const server = await startServe(['--port', '0', '--data-dir', path.join(scratch, 'server-data')], { ...baseEnv, PLAZA_LOG_LEVEL: 'error' })
try {
  const embedded = { PLAZA_DATA_DIR: dataDir }
  const remote = { PLAZA_URL: server.url }
  for (const env of [embedded, remote]) {
    await run([BIN, 'social', 'register', '-u', 'bench', '-e', 'bench@example.com', '--password-stdin'], env, 'correct horse battery')
  }

  const cases: Array<[string, string[], NodeJS.ProcessEnv]> = [
    ['node -e 0 (process start)', ['-e', '0'], {}],
    ['plaza --version (oclif)', [BIN, '--version'], {}],
    ['plaza social whoami (embedded)', [BIN, 'social', 'whoami'], embedded],
    ['plaza social whoami (remote)', [BIN, 'social', 'whoami'], remote],
  ]
  const baseline = process.env.PLAZA_BENCH_BASELINE
  if (baseline) {
    const other = path.join(path.resolve(baseline), 'bin/run.js')
    cases.push(['baseline: --version', [other, '--version'], {}], ['baseline: whoami (embedded)', [other, 'social', 'whoami'], embedded], ['baseline: whoami (remote)', [other, 'social', 'whoami'], remote])
  }
  const times = new Map<string, number[]>(cases.map(([name]) => [name, []]))
  await run(cases[2][1], embedded) // warm the file-system cache once
  // Interleaved, so a burst of load on the machine hits every case alike.
  for (let i = 0; i < RUNS; i++) for (const [name, args, env] of cases) times.get(name)!.push(await run(args, env))

  const node = median(times.get(cases[0][0])!)
  const version = median(times.get(cases[1][0])!)
  console.log(`CLI start-up, ${RUNS} spawned runs of each, interleaved (Node ${process.version}, ${process.platform}/${process.arch}, ${os.availableParallelism()} CPUs, load ${os.loadavg()[0].toFixed(1)})\n`)
  console.log('| command | median ms | p90 ms | median × node -e 0 | median × plaza --version |')
  console.log('|---|---:|---:|---:|---:|')
  for (const [name] of cases) {
    const ms = median(times.get(name)!)
    console.log(`| ${name} | ${ms.toFixed(0)} | ${p90(times.get(name)!).toFixed(0)} | ${(ms / node).toFixed(1)} | ${(ms / version).toFixed(2)} |`)
  }
} finally {
  server.child.kill('SIGINT')
  await server.exited
  rmSync(scratch, { recursive: true, force: true })
}
