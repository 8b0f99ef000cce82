/**
 * The Python sandbox's processes. Each is a Node process running Pyodide (pyodide-child.ts),
 * started ahead of need so that a run does not pay Pyodide's seconds of loading, used for one
 * program and then killed: a fresh interpreter every time, and nothing a program did survives it.
 * The parent enforces the wall-clock limit and the memory limit (the process's resident size,
 * which counts Pyodide's WebAssembly memory too) by SIGKILL.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { TRPCError } from '@trpc/server'
import { Capture } from './capture.js'
import type { SandboxJob, SandboxResult } from './job.js'
import { PYODIDE_CHILD_SOURCE } from './pyodide-child.js'

/** A process that has not loaded Pyodide in this long is given up on (loading takes 2-10 s on a busy machine). */
const START_TIMEOUT_MS = 60_000
/** How often the resident size is read while a program runs. */
const MEMORY_POLL_MS = 50
/** A line from the child longer than this means it is not the child program talking: killed. */
const MAX_LINE = 4 * 1024 * 1024
/** Node's permission model: `--experimental-permission` on Node 20, `--permission` from Node 22 (24 refuses the old name). */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission'

interface Child {
  process: ChildProcess
  /** The end of what the process wrote on stderr (Node's own errors: a program's stderr comes on stdout). */
  errors: () => string
  ready: Promise<void>
  lines: (line: string) => void
}

/**
 * Namespaces for the process, where the host allows them (root, or unprivileged user namespaces):
 * an empty network namespace (no address outside exists) and a PID namespace (no process outside
 * can be seen or signalled, Plaza included). `unshare` forks: the program is its child, and dies
 * with it (`--kill-child`).
 */
const UNSHARE_FLAGS = ['--net', '--pid', '--fork', '--kill-child', '--map-root-user']

function findUnshare(): string | null {
  const found = ['/usr/bin/unshare', '/bin/unshare'].find((file) => existsSync(file))
  if (!found) return null
  const probe = spawnSync(found, [...UNSHARE_FLAGS, 'true'], { env: {}, stdio: 'ignore', timeout: 5000 })
  return probe.status === 0 ? found : null
}

/** The resident size of a process and its children (unshare's child is the program), from /proc; 0 where there is none. */
function residentBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)
    return (match ? Number(match[1]) * 1024 : 0) + children.reduce((sum, child) => sum + residentBytes(Number(child)), 0)
  } catch {
    return 0
  }
}

export class PyodidePool {
  private readonly idle: Child[] = []
  private readonly running = new Set<ChildProcess>()
  private readonly pyodideDir = path.dirname(realpathSync(createRequire(import.meta.url).resolve('pyodide/pyodide.mjs')))
  private unshare: string | null | undefined
  private closed = false

  constructor(private readonly options: { warm: number }) {}

  /** Whether programs run in network and PID namespaces, or with the networking and signalling functions removed only. */
  get network(): 'namespace' | 'in-process' {
    this.unshare ??= findUnshare()
    return this.unshare ? 'namespace' : 'in-process'
  }

  /** Starts the warm processes (the first run would otherwise wait for Pyodide to load). */
  warm() {
    while (!this.closed && this.idle.length < this.options.warm) this.idle.push(this.spawn())
  }

  async run(job: SandboxJob): Promise<SandboxResult> {
    if (this.closed) throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'The Python sandbox is shutting down' })
    const child = this.idle.shift() ?? this.spawn()
    this.warm()
    try {
      await child.ready
    } catch (error) {
      child.process.kill('SIGKILL')
      throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: (error as Error).message, cause: error })
    }
    return this.execute(child, job)
  }

  async close() {
    this.closed = true
    for (const child of this.idle.splice(0)) child.process.kill('SIGKILL')
    for (const process of this.running) process.kill('SIGKILL')
  }

  private spawn(): Child {
    const node = [
      PERMISSION_FLAG,
      `--allow-fs-read=${this.pyodideDir}/`,
      '--max-old-space-size=256',
      '--no-warnings',
      '--input-type=module',
      '--eval',
      PYODIDE_CHILD_SOURCE,
      pathToFileURL(path.join(this.pyodideDir, 'pyodide.mjs')).href,
    ]
    const unshare = this.network === 'namespace' ? this.unshare! : null
    // No environment at all: nothing of Plaza's (PLAZA_*, keys) reaches the process; nor its working directory.
    const options = { env: {}, cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] as Array<'pipe'> }
    const process = unshare
      ? spawn(unshare, [...UNSHARE_FLAGS, globalThis.process.execPath, ...node], options)
      : spawn(globalThis.process.execPath, node, options)
    this.running.add(process)
    process.on('exit', () => this.running.delete(process))
    process.on('error', () => {})
    process.stdin!.on('error', () => {})
    process.unref()
    let buffered = ''
    let errors = ''
    const child: Child = { process, errors: () => errors.trim().split('\n').pop() ?? '', ready: Promise.resolve(), lines: () => {} }
    process.stderr!.on('data', (data: Buffer) => void (errors = (errors + data.toString()).slice(-4000)))
    process.stdout!.on('data', (data: Buffer) => {
      buffered += data.toString('utf8')
      let end: number
      while ((end = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, end)
        buffered = buffered.slice(end + 1)
        child.lines(line)
      }
      if (buffered.length > MAX_LINE) process.kill('SIGKILL')
    })
    child.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => fail(`did not start within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS)
      const fail = (why: string) => {
        clearTimeout(timer)
        reject(new Error(`The Python sandbox ${why}${errors ? `: ${child.errors()}` : ''}`))
      }
      process.once('exit', (code, signal) => fail(`exited while starting (${signal ?? code})`))
      child.lines = (line) => {
        if (line === '{"ready":true}') {
          clearTimeout(timer)
          resolve()
        }
      }
    })
    child.ready.catch(() => {})
    return child
  }

  private execute(child: Child, job: SandboxJob): Promise<SandboxResult> {
    const { process } = child
    const started = performance.now()
    const stdout = new Capture(job.outputBytes)
    const stderr = new Capture(job.outputBytes)
    return new Promise((resolve) => {
      let exitCode: number | null = null
      let stop: 'time' | 'memory' | null = null
      const kill = (why: typeof stop) => {
        stop ??= why
        process.kill('SIGKILL')
      }
      const timer = setTimeout(() => kill('time'), job.timeoutMs)
      const watch = setInterval(() => residentBytes(process.pid!) > job.memoryBytes && kill('memory'), MEMORY_POLL_MS)
      child.lines = (line) => {
        let message: { stream?: 1 | 2; text?: string; exit?: number }
        try {
          message = JSON.parse(line)
        } catch {
          return kill(null)
        }
        if (message.stream) (message.stream === 2 ? stderr : stdout).add(String(message.text ?? ''))
        else if (typeof message.exit === 'number') {
          exitCode = message.exit
          process.kill('SIGKILL')
        }
      }
      process.once('exit', () => {
        clearTimeout(timer)
        clearInterval(watch)
        if (stop === 'time') stderr.add(`Stopped: the program ran past its ${job.timeoutMs / 1000} s time limit\n`)
        else if (stop === 'memory') stderr.add(`Stopped: the program used more than its ${job.memoryBytes / 1024 ** 2} MiB of memory\n`)
        else if (stdout.cut || stderr.cut) stderr.add(`Stopped: the program's output passed ${job.outputBytes} bytes\n`)
        else if (exitCode === null) stderr.add(`The Python sandbox stopped unexpectedly${child.errors() ? `: ${child.errors()}` : ''}\n`)
        resolve({
          stdout: stdout.text(),
          stderr: stderr.text(),
          exit_code: stop === 'time' ? 124 : stop === 'memory' ? 137 : stdout.cut || stderr.cut ? 1 : (exitCode ?? 1),
          timed_out: stop === 'time',
          duration_ms: Math.round(performance.now() - started),
        })
      })
      process.stdin!.end(JSON.stringify({ code: job.code, stdin: job.stdin, outputBytes: job.outputBytes }) + '\n')
    })
  }
}
