import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { dataDirOf, databaseEnvFor } from './databases.js'
import { suiteEnv } from './suite-env.js'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

export interface RunResult {
  code: number | null
  stdout: string
  stderr: string
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv
  /** Written to stdin, which is then closed (stdin is always a pipe, never a TTY). */
  input?: string
  cwd?: string
}

/**
 * Runs the built `plaza` binary (bin/run.js) to completion, in a clean environment: nothing from
 * the developer's own PLAZA_* variables or config leaks in, only PATH, HOME and `env` (and, on the
 * data directory of a test server whose database is on a libsql server, its PLAZA_DATABASE_URL).
 */
export function runCli(args: string[], { env = {}, input, cwd = ROOT }: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...suiteEnv(), ...databaseEnvFor(dataDirOf(args, env)), ...env },
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(input ?? '')
  })
}

/**
 * Starts `plaza serve` and resolves once it prints its `listening on` line. `detached` puts it in a
 * process group of its own, as a shell does a foreground job: `process.kill(-child.pid, signal)`
 * then signals every process of it, as a terminal's Ctrl+C or systemd's stop do. `bin` runs another
 * installation's `bin/run.js`.
 */
export function startServe(args: string[], env: NodeJS.ProcessEnv = {}, { detached = false, bin = BIN } = {}): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null>; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'serve', ...args], { env: { ...suiteEnv(), ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached })
    let output = ''
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)))
    child.stderr!.on('data', (d) => (output += d))
    child.stdout!.on('data', (d) => {
      output += d
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) resolve({ child, url: match[1], exited, output: () => output })
    })
    exited.then((code) => reject(new Error(`plaza serve exited with ${code}: ${output}`)))
  })
}
