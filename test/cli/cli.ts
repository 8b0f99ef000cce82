/** Drives the real `plaza` binary (dist/, built by `npm test`) as a user would: spawned, with its own config dir. */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import path from 'node:path'
import sharp from 'sharp'
import { runCli, type RunOptions, type RunResult } from '../helpers/cli.js'
import { tempDir } from '../helpers/server.js'

export { runCli }
export type CliResult = RunResult

/** One person at a shell: their own XDG config dir (so their own sessions), and a target (remote URL or embedded data dir). */
export interface Shell {
  configHome: string
  env: NodeJS.ProcessEnv
  run(args: string[], options?: RunOptions): Promise<CliResult>
  /** Runs with --json, fails on a non-zero exit, parses stdout. */
  json<T = any>(args: string[], options?: RunOptions): Promise<T>
  /** The active account's session per target (server URL or `embedded:<dir>`). */
  sessions(): Record<string, { token: string; username: string; expires_at: string }>
  /** Every byte this shell has printed, to check secrets never appear. */
  transcript: string[]
}

export function shell(target: { url: string } | { dataDir: string }, extraEnv: NodeJS.ProcessEnv = {}): Shell {
  const configHome = tempDir('plaza-cli-config-')
  const env: NodeJS.ProcessEnv = {
    XDG_CONFIG_HOME: configHome,
    XDG_CACHE_HOME: path.join(configHome, 'cache'),
    XDG_DATA_HOME: path.join(configHome, 'data'),
    ...('url' in target ? { PLAZA_URL: target.url } : { PLAZA_DATA_DIR: target.dataDir }),
    ...extraEnv,
  }
  const transcript: string[] = []
  const self: Shell = {
    configHome,
    env,
    transcript,
    async run(args, options = {}) {
      const result = await runCli(args, { ...options, env: { ...env, ...options.env } })
      transcript.push(result.stdout, result.stderr)
      return result
    },
    async json(args, options) {
      const result = await self.run([...args, '--json'], options)
      if (result.code !== 0) throw new Error(`plaza ${args.join(' ')} exited ${result.code}: ${result.stderr}`)
      return JSON.parse(result.stdout)
    },
    sessions() {
      // sessions.json keeps several accounts per target (version 2); this is each target's active one.
      const file = JSON.parse(readFileSync(path.join(configHome, 'plaza', 'sessions.json'), 'utf8'))
      const active: Record<string, { token: string; username: string; expires_at: string }> = {}
      for (const [key, target] of Object.entries<any>(file.targets)) if (target.active) active[key] = target.accounts[target.active]
      return active
    },
  }
  return self
}

/** A real PNG to upload. */
export async function writePng(dir: string, name = 'photo.png', width = 320, height = 200): Promise<string> {
  const file = path.join(dir, name)
  await sharp({ create: { width, height, channels: 3, background: { r: 250, g: 120, b: 30 } } })
    .png()
    .toFile(file)
  return file
}

/** A port nothing listens on (bound, then released). */
export function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}
