import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

export interface RunResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the built `plaza` binary (bin/run.js) to completion. */
export function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? '')
  })
}

/** Starts `plaza serve` and resolves once it prints its `listening on` line. */
export function startServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null>; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
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
