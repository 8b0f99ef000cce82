/**
 * The Python sandbox's processes. Each is a Node process running Pyodide (pyodide-child.ts), used
 * for one program and then killed: a fresh interpreter every time, and nothing a program did
 * survives it. The parent enforces the wall-clock limit and the memory limit (the process's
 * resident size, which counts Pyodide's WebAssembly memory too) by SIGKILL.
 *
 * Runs never wait for a load where it can be helped: from the first run on, `warm` processes are
 * kept loaded, and each one taken is replaced at once, in the background. Loading starts from a
 * memory snapshot of a freshly loaded interpreter, made once per pool by a process of its own (no
 * program has run in it): about a seventh of the CPU of a full load. A process that fails to load
 * is dropped and replaced, never handed to a run; after START_FAILURES_TO_GIVE_UP failures in a
 * row, runs waiting for one are answered 503 rather than kept waiting.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { PoolBusyError } from '../../../workers/pool.js'
import { niced } from '../../../workers/priority.js'
import { Capture } from './capture.js'
import type { SandboxJob, SandboxResult } from './job.js'
import { PYODIDE_CHILD_SOURCE } from './pyodide-child.js'

/** A process that has not loaded Pyodide in this long is given up on (loading takes 2-10 s on a busy machine, a fifth of that from the snapshot). */
const START_TIMEOUT_MS = 60_000
/** Failed loads in a row after which waiting runs are answered 503 (and the snapshot, if any, is given up). */
const START_FAILURES_TO_GIVE_UP = 3
/** The snapshot's size is bounded, as the parent holds it (about 32 MiB for Pyodide 314). */
const MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024
/** How long close() waits for the killed processes to be gone (SIGKILL takes milliseconds; this only bounds a process the kernel holds). */
const CLOSE_WAIT_MS = 5_000
/** How often the resident size is read while a program runs. */
const MEMORY_POLL_MS = 50
/** A line from the child longer than this means it is not the child program talking: killed. */
const MAX_LINE = 4 * 1024 * 1024
/** Node's permission model: `--experimental-permission` on Node 20, `--permission` from Node 22 (24 refuses the old name). */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission'

interface Child {
  process: ChildProcess
  /** What the process wrote on stderr (Node's own errors: a program's stderr comes on stdout), its first 8000 characters. */
  errors: () => string
  lines: (line: string) => void
}

/**
 * What a sandbox that died says to the program's caller: one short line, never the engine's own
 * output (Pyodide's fatal errors quote its minified JavaScript and the host's paths), which goes
 * to the log only.
 */
export function describeCrash(errors: string): string {
  const permission = /permission: '(\w+)'/.exec(errors)?.[1]
  if (/ERR_ACCESS_DENIED/.test(errors)) {
    const what: Record<string, string> = { ChildProcess: 'starting a process', WorkerThreads: 'starting a thread', FileSystemWrite: 'writing a file', FileSystemRead: 'reading a file outside the sandbox' }
    const named = permission && Object.hasOwn(what, permission) ? what[permission] : 'this'
    return `Stopped: the sandbox does not allow ${named} (processes, threads, host files and sockets are refused)`
  }
  if (/Pyodide has suffered a fatal error|pyodide_fatal_error/.test(errors)) return 'Stopped: the Python runtime failed while running the program'
  return 'Stopped: the Python sandbox stopped unexpectedly'
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


export interface PyodidePoolOptions {
  /** Processes kept loaded once the first run has come (PLAZA_EXECUTE_PYTHON_WARM). */
  warm: number
  /** Called with what a sandbox said when it failed (to load, or while running), for the log. */
  onFailure?: (message: string, detail: string) => void
  /** Load from a memory snapshot (default on): off loads every process in full. */
  snapshot?: boolean
}

interface Waiter {
  resolve: (child: Child) => void
  reject: (error: unknown) => void
}

export class PyodidePool {
  /** Loaded processes, ready for a program. */
  private readonly idle: Child[] = []
  private readonly starting = new Set<Child>()
  /** Every process alive, whatever its state: what close() and the process's exit kill. */
  private readonly processes = new Set<ChildProcess>()
  private readonly waiters: Waiter[] = []
  private readonly running = new Map<ChildProcess, () => void>()
  private readonly pyodideDir = path.dirname(realpathSync(createRequire(import.meta.url).resolve('pyodide/pyodide.mjs')))
  private unshare: string | null | undefined
  private snapshot: Promise<Buffer | null> | undefined
  private startFailures = 0
  private retry: NodeJS.Timeout | undefined
  private warmed = false
  private closed = false
  private readonly killAll = () => {
    for (const process of this.processes) process.kill('SIGKILL')
  }

  constructor(private readonly options: PyodidePoolOptions) {
    // Processes are unref'd so that they never keep Plaza alive; they must not outlive it either.
    globalThis.process.on('exit', this.killAll)
  }

  /** Whether programs run in network and PID namespaces, or with the networking and signalling functions removed only. */
  get network(): 'namespace' | 'in-process' {
    this.unshare ??= findUnshare()
    return this.unshare ? 'namespace' : 'in-process'
  }

  /** Processes loaded and loading. */
  get stats() {
    return { idle: this.idle.length, starting: this.starting.size, running: this.running.size, waiting: this.waiters.length }
  }

  /** Starts the warm processes now (and keeps them from then on), so that the first run waits for no load either. */
  warm() {
    this.warmed = true
    this.fill()
  }

  /** Runs a program in a loaded process: its result, and how long it waited for one to load (`startMs`). */
  async run(job: SandboxJob): Promise<{ result: SandboxResult; startMs: number }> {
    if (this.closed) throw this.shuttingDown()
    this.warmed = true
    const asked = performance.now()
    const child = this.idle.shift() ?? (await this.nextReady())
    const startMs = Math.round(performance.now() - asked)
    // The one taken is replaced now, in the background, not when the next run comes.
    this.fill()
    return { result: await this.execute(child, job), startMs }
  }

  /**
   * Stops the pool: loaded and loading processes are killed at once, running programs get
   * `graceMs` to finish (then are killed, their callers answered 503), waiting runs get 503.
   */
  async close(graceMs = 0) {
    this.closed = true
    clearTimeout(this.retry)
    for (const child of [...this.idle.splice(0), ...this.starting]) child.process.kill('SIGKILL')
    this.starting.clear()
    for (const waiter of this.waiters.splice(0)) waiter.reject(this.shuttingDown())
    if (graceMs > 0 && this.running.size > 0) {
      const ended = [...this.running.keys()].map((process) => new Promise((resolve) => (process.exitCode !== null || process.signalCode !== null ? resolve(null) : process.once('exit', resolve))))
      await Promise.race([Promise.all(ended), new Promise((resolve) => setTimeout(resolve, graceMs).unref())])
    }
    for (const stop of this.running.values()) stop()
    // Every process still in the set is alive (each leaves it on exit): close resolves once they are gone, not merely signalled.
    const gone = [...this.processes].map((process) => new Promise((resolve) => process.once('exit', resolve)))
    this.killAll()
    globalThis.process.off('exit', this.killAll)
    await Promise.race([Promise.all(gone), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())])
  }

  private shuttingDown() {
    return new PoolBusyError('The Python sandbox is shutting down', 1)
  }

  private nextReady(): Promise<Child> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject })
      this.fill()
    })
  }

  /** Starts loads until the loaded and loading processes cover the warm count and every waiting run. */
  private fill() {
    if (this.closed || this.retry) return
    const wanted = (this.warmed ? this.options.warm : 0) + this.waiters.length
    if (this.idle.length + this.starting.size >= wanted) return
    // After failed loads, the next waits a little longer each time (a missing package stays missing).
    if (this.startFailures >= 2) {
      this.retry = setTimeout(() => {
        this.retry = undefined
        const missing = (this.warmed ? this.options.warm : 0) + this.waiters.length - this.idle.length - this.starting.size
        if (!this.closed && missing > 0) this.start()
        this.fill()
      }, Math.min(30_000, 250 * 2 ** (this.startFailures - 2)))
      if (this.waiters.length === 0) this.retry.unref()
      return
    }
    while (this.idle.length + this.starting.size < wanted) this.start()
  }

  /** Starts one process, from the snapshot once there is one; it joins the idle ones (or a waiting run) when loaded. */
  private start() {
    const snapshot = (this.snapshot ??= this.options.snapshot === false ? Promise.resolve(null) : this.makeSnapshot())
    const child = this.spawn('run')
    this.starting.add(child)
    const timer = setTimeout(() => failed(`did not start within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS)
    let done = false
    const failed = (why: string) => {
      if (done) return
      done = true
      clearTimeout(timer)
      child.process.kill('SIGKILL')
      if (!this.starting.delete(child)) return
      this.startFailures++
      this.options.onFailure?.(`a Python sandbox ${why}`, child.errors().slice(0, 2000))
      if (this.startFailures >= START_FAILURES_TO_GIVE_UP) {
        // The snapshot may be what fails: the next loads start from nothing.
        void snapshot.then((bytes) => bytes && (this.snapshot = Promise.resolve(null)))
        if (this.idle.length === 0) for (const waiter of this.waiters.splice(0)) waiter.reject(new PoolBusyError('The Python sandbox cannot start right now; try again later', 30))
      }
      this.fill()
    }
    child.process.once('exit', (code, signal) => failed(`exited while starting (${signal ?? code})`))
    child.lines = (line) => {
      if (line !== '{"ready":true}' || done) return
      done = true
      clearTimeout(timer)
      this.starting.delete(child)
      this.startFailures = 0
      // A loaded process that dies before its run (killed from outside) is not handed out.
      child.process.once('exit', () => {
        const index = this.idle.indexOf(child)
        if (index >= 0) this.idle.splice(index, 1)
        this.fill()
      })
      const waiter = this.waiters.shift()
      if (waiter) waiter.resolve(child)
      else this.idle.push(child)
    }
    void snapshot.then((bytes) => {
      const stdin = child.process.stdin!
      stdin.write(JSON.stringify({ snapshot: bytes?.length ?? 0 }) + '\n')
      if (bytes) stdin.write(bytes)
    })
  }

  /** A memory snapshot of a freshly loaded interpreter, from a process of its own; null when it cannot be made (loads start from nothing). */
  private makeSnapshot(): Promise<Buffer | null> {
    const child = this.spawn('snapshot')
    child.process.stdin!.end()
    return new Promise((resolve) => {
      const chunks: Buffer[] = []
      let size = 0
      const timer = setTimeout(() => child.process.kill('SIGKILL'), START_TIMEOUT_MS)
      child.process.stdout!.removeAllListeners('data')
      child.process.stdout!.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        size += chunk.length
        if (size > MAX_SNAPSHOT_BYTES + 64) child.process.kill('SIGKILL')
      })
      child.process.once('exit', (code) => {
        clearTimeout(timer)
        const output = Buffer.concat(chunks)
        const end = output.indexOf(10)
        let length = -1
        try {
          length = JSON.parse(output.subarray(0, end).toString()).snapshot
        } catch {}
        const bytes = output.subarray(end + 1)
        if (code === 0 && end > 0 && length > 0 && bytes.length === length) return resolve(bytes)
        this.options.onFailure?.('the Python sandbox snapshot could not be made; each sandbox loads in full', child.errors().slice(0, 2000))
        resolve(null)
      })
    })
  }

  private spawn(mode: 'run' | 'snapshot'): Child {
    const node = [
      PERMISSION_FLAG,
      `--allow-fs-read=${this.pyodideDir}/`,
      '--max-old-space-size=256',
      '--no-warnings',
      '--input-type=module',
      '--eval',
      PYODIDE_CHILD_SOURCE,
      pathToFileURL(path.join(this.pyodideDir, 'pyodide.mjs')).href,
      mode,
    ]
    const unshare = this.network === 'namespace' ? this.unshare! : null
    // No environment at all: nothing of Plaza's (PLAZA_*, keys) reaches the process; nor its working directory.
    const options = { env: {}, cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] as Array<'pipe'> }
    // Below the server's priority from the first instruction (Node's own threads included), not only once the program lowers its own.
    const process = unshare
      ? spawn(...niced(unshare, [...UNSHARE_FLAGS, globalThis.process.execPath, ...node]), options)
      : spawn(...niced(globalThis.process.execPath, node), options)
    this.processes.add(process)
    process.on('exit', () => this.processes.delete(process))
    process.on('error', () => {})
    process.stdin!.on('error', () => {})
    process.unref()
    let buffered = ''
    let errors = ''
    const child: Child = { process, errors: () => errors, lines: () => {} }
    // The head: Node and Pyodide say what went wrong first, then quote their source.
    process.stderr!.on('data', (data: Buffer) => void (errors.length < 8000 && (errors = (errors + data.toString()).slice(0, 8000))))
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
    return child
  }

  private execute(child: Child, job: SandboxJob): Promise<SandboxResult> {
    const { process } = child
    const started = performance.now()
    const stdout = new Capture(job.outputBytes)
    const stderr = new Capture(job.outputBytes)
    return new Promise((resolve, reject) => {
      let exitCode: number | null = null
      let stop: 'time' | 'memory' | 'shutdown' | null = null
      const kill = (why: typeof stop) => {
        stop ??= why
        process.kill('SIGKILL')
      }
      this.running.set(process, () => kill('shutdown'))
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
      const ended = () => {
        clearTimeout(timer)
        clearInterval(watch)
        this.running.delete(process)
        if (stop === 'shutdown') return reject(this.shuttingDown())
        if (stop === 'time') stderr.add(`Stopped: the program ran past its ${job.timeoutMs / 1000} s time limit\n`)
        else if (stop === 'memory') stderr.add(`Stopped: the program used more than its ${job.memoryBytes / 1024 ** 2} MiB of memory\n`)
        else if (stdout.cut || stderr.cut) stderr.add(`Stopped: the program's output passed ${job.outputBytes} bytes\n`)
        else if (exitCode === null) {
          this.options.onFailure?.('a Python sandbox stopped while running a program', child.errors().slice(0, 2000))
          stderr.add(`${describeCrash(child.errors())}\n`)
        }
        resolve({
          stdout: stdout.text(),
          stderr: stderr.text(),
          exit_code: stop === 'time' ? 124 : stop === 'memory' ? 137 : stdout.cut || stderr.cut ? 1 : (exitCode ?? 1),
          timed_out: stop === 'time',
          duration_ms: Math.round(performance.now() - started),
        })
      }
      if (process.exitCode !== null || process.signalCode !== null) ended()
      else process.once('exit', ended)
      process.stdin!.end(JSON.stringify({ code: job.code, stdin: job.stdin, outputBytes: job.outputBytes }) + '\n')
    })
  }
}
