/**
 * The social test suite against a real libsql server: every test server of the run gets a sqld
 * of its own (PLAZA_TEST_DATABASE=sqld, test/helpers/server.ts and sqld.ts), so each suite's
 * requests reach the database over Hrana-over-HTTP as an operator's sqld or Turso would serve them.
 *
 *   npm run test:hrana               every social test file but the EXCLUDED ones, and the ADMIN
 *                                    files of other folders (slower than on the local file: one
 *                                    HTTP round trip per query; 15 min with two jobs on a loaded
 *                                    2-core machine, 2026-11-29)
 *   npm run test:hrana -- FILE...    chosen files of test/social
 *
 * `npm test` runs SUBSET this way (social-on-sqld.test.ts), a few files that cover reads, writes,
 * interactive transactions, FTS5 and the notification feed, to stay within its time.
 */
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const SOCIAL = fileURLToPath(new URL('../social/', import.meta.url))
const RUNNER = fileURLToPath(new URL('../run.ts', import.meta.url))

/** Files that cannot run on a libsql server, and why. */
export const EXCLUDED: Record<string, string> = {
  'backup.test.ts':
    'plaza admin backup and restore copy a local plaza.db; with PLAZA_DATABASE_URL set they refuse by design (back up a libsql server with its own tools, docs/deploy.md), which test/server/config and the CLI tests cover',
}

/** The `plaza admin` commands tested outside test/social (gateway keys, storage migrate), run on sqld too. */
export const ADMIN = ['../chat/keys-cli.test.ts', '../storage/cli.test.ts']

/** What `npm test` runs against sqld. */
export const SUBSET = ['interactions.test.ts', 'search.test.ts', 'moderation-atomic.test.ts', 'explore.test.ts']

export function socialFiles(names?: string[]): string[] {
  const all = readdirSync(SOCIAL).filter((name) => name.endsWith('.test.ts'))
  const chosen = names?.length ? names.map((name) => path.basename(name)) : all.filter((name) => !(name in EXCLUDED))
  for (const name of chosen) if (!all.includes(name)) throw new Error(`no test file test/social/${name}`)
  return [...chosen.map((name) => path.join(SOCIAL, name)), ...(names?.length ? [] : ADMIN.map((name) => path.join(SOCIAL, name)))]
}

function withoutAnswersDir(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { PLAZA_TEST_ANSWERS_DIR: _enclosing, ...rest } = env
  return rest
}

/** Runs `files` with test/run.ts, every test server on a sqld of its own; resolves with the exit code and output. */
export function runOnSqld(files: string[], { echo = false } = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', RUNNER, ...files], {
      // Two files at a time: this often runs inside `npm test`, beside its own jobs. The run records
      // and checks its own answers (test/helpers/recorder.ts): not in the directory of an enclosing
      // `npm test`, whose check would otherwise run here on whatever other files had recorded so far.
      env: { ...withoutAnswersDir(process.env), PLAZA_TEST_DATABASE: 'sqld', PLAZA_TEST_JOBS: process.env.PLAZA_TEST_JOBS ?? '2' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    const take = (chunk: Buffer) => {
      output += chunk
      if (echo) process.stdout.write(chunk)
    }
    child.stdout.on('data', take)
    child.stderr.on('data', take)
    child.on('close', (code) => resolve({ code, output }))
  })
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2)
  if (!names.length) for (const [name, why] of Object.entries(EXCLUDED)) console.log(`not run: ${name}: ${why}`)
  const { code } = await runOnSqld(socialFiles(names), { echo: true })
  process.exit(code ?? 1)
}
