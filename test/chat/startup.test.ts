/**
 * The chat configuration is read only by what chats: an embedded social command works with a broken
 * PLAZA_LLM_CONFIG, while `plaza serve` still refuses to start (exit 2, naming the problem) and
 * `plaza util chat` reports it; and neither the chat modules nor undici load where they are not
 * used. Spawns the built binary: `npm run build` first.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { loadConfig, ConfigError } from '../../src/server/config.js'
import { silentLogger } from '../../src/server/logger.js'
import { createServices } from '../../src/server/services.js'
import { runCli, startServe } from '../helpers/cli.js'
import { startTestServer, tempDir } from '../helpers/server.js'
import { reply, startFakeUpstream } from './fake-upstream.js'
import { post, providerFile, USER_HI } from './helpers.js'

const lazy = suite<{ env: NodeJS.ProcessEnv; file: string }>('chat configuration: read on first use')

lazy.before((ctx) => {
  ctx.file = providerFile('providers: [unclosed')
  const home = tempDir('plaza-chat-home-')
  ctx.env = { PLAZA_LLM_CONFIG: ctx.file, PLAZA_DATA_DIR: path.join(home, 'data'), XDG_CONFIG_HOME: path.join(home, 'config') }
})

lazy('embedded social commands work with a broken PLAZA_LLM_CONFIG', async ({ env }) => {
  const register = await runCli(['social', 'register', '-u', 'lazychat', '-e', 'lazychat@example.com', '--password-stdin', '--json'], { env, input: 'correct horse battery\n' })
  assert.is(register.code, 0, register.stderr)
  const whoami = await runCli(['social', 'whoami', '--json'], { env })
  assert.is(whoami.code, 0, whoami.stderr)
  assert.is(JSON.parse(whoami.stdout).username, 'lazychat')
  assert.is(whoami.stderr, '')
})

lazy('plaza serve with the same environment exits 2 naming the problem, before opening the database', async ({ env, file }) => {
  const dataDir = path.join(tempDir(), 'serve-data')
  try {
    const started = await startServe(['--port', '0', '--data-dir', dataDir], { ...env, PLAZA_DATA_DIR: dataDir })
    started.child.kill('SIGKILL')
    assert.unreachable('plaza serve started with a broken PLAZA_LLM_CONFIG')
  } catch (error) {
    // oclif wraps the line at the terminal width, with a ` ›   ` prefix on each piece (coloured when the runner forces colour).
    const message = (error as Error).message.replace(/\x1b\[[0-9;]*m/g, '').replace(/\s*\n\s*›\s+/g, ' ')
    assert.match(message, /exited with 2/)
    assert.match(message, /Error: chat configuration: /)
    assert.ok(message.includes(file), 'names the file')
    assert.match(message, /not valid YAML/, message)
    assert.not.match(message, /\n\s+at /, 'no stack trace')
  }
  assert.not.ok(existsSync(path.join(dataDir, 'plaza.db')), 'the database was not created')
})

lazy('plaza util chat (embedded) reports the broken configuration as an error', async ({ env, file }) => {
  const result = await runCli(['util', 'chat', 'Hi'], { env })
  assert.is(result.code, 1)
  assert.is(result.stdout, '')
  assert.ok(result.stderr.startsWith('Error: '), result.stderr)
  assert.ok(result.stderr.includes(file), result.stderr)
  assert.match(result.stderr, /not valid YAML/)
})

lazy('in-process: services start without reading it; the chat operations answer 503 naming it; eagerChat throws ConfigError', async ({ file }) => {
  const env = { PLAZA_LLM_CONFIG: file }
  const server = await startTestServer({ env })
  try {
    const health = await server.request('GET', '/health')
    assert.is(health.status, 200)
    const v1 = await server.request('POST', '/api/v1/chat/completions', { body: { messages: USER_HI } })
    assert.is(v1.status, 503)
    assert.is(v1.body.error.code, 'provider_not_configured')
    assert.match(v1.body.error.message, /chat configuration is invalid: .*not valid YAML/)
    const chaty = await server.request('POST', '/api/chaty', { body: { messages: USER_HI } })
    assert.is(chaty.status, 503)
    assert.match(chaty.body.message, /not valid YAML/)
    assert.is((await server.services.chat().catch((error) => error)).constructor.name, ConfigError.name)
  } finally {
    await server.close()
  }

  const dataDir = path.join(tempDir(), 'eager')
  const eager = await createServices(loadConfig({ dataDir, rateLimits: false }, env), { logger: silentLogger, eagerChat: true }).catch((error) => error)
  assert.is(eager.constructor.name, ConfigError.name, String(eager))
  assert.not.ok(existsSync(path.join(dataDir, 'plaza.db')), 'failed before opening the database')
})

lazy.run()

// ---------------------------------------------------------------- what a process loads

const PROBE = pathToFileURL(path.join(import.meta.dirname, 'fixtures/module-log.mjs')).href

// The files as node names them: the real path (the suite runs from a compiled copy, test/compile.ts, whose dist/ is a link).
const ROOT = path.dirname(realpathSync(path.resolve(import.meta.dirname, '../../dist')))
const BUNDLE = pathToFileURL(path.join(ROOT, 'dist/bundle')).href + '/'

/**
 * Environment that makes a spawned plaza log every module it imports to the returned file.
 * `files()` lists the files read; `loaded()` also lists, for each file of the CLI bundle
 * (dist/bundle/, src/cli/bundle.ts), the modules bundled into it, as the URLs they have unbundled.
 */
function moduleLog(): { env: NodeJS.ProcessEnv; files: () => string[]; loaded: () => string[] } {
  const file = path.join(tempDir('plaza-modules-'), 'modules.log')
  const files = () => (existsSync(file) ? [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))] : [])
  return {
    env: { NODE_OPTIONS: `--import=${PROBE}`, PLAZA_MODULE_LOG: file },
    files,
    loaded: () => {
      const inputs = JSON.parse(readFileSync(path.join(ROOT, 'dist/bundle/inputs.json'), 'utf8')) as Record<string, string[]>
      return files().flatMap((url) =>
        url.startsWith(BUNDLE) ? [url, ...(inputs[url.slice(BUNDLE.length)] ?? []).map((input) => pathToFileURL(path.join(ROOT, input)).href)] : [url],
      )
    },
  }
}

/**
 * Registers `username` (with `registerEnv`, by default `env`), then runs `social whoami --json` as
 * them under a module log: what whoami loaded.
 */
async function whoamiModules(username: string, env: NodeJS.ProcessEnv, registerEnv: NodeJS.ProcessEnv = env) {
  const register = await runCli(['social', 'register', '-u', username, '-e', `${username}@example.com`, '--password-stdin'], { env: registerEnv, input: 'correct horse battery' })
  assert.is(register.code, 0, register.stderr)
  const log = moduleLog()
  const whoami = await runCli(['social', 'whoami', '--json'], { env: { ...env, ...log.env } })
  assert.is(whoami.code, 0, whoami.stderr)
  assert.is(JSON.parse(whoami.stdout).username, username)
  return log
}

const UNDICI = /\/node_modules\/undici\//
const YAML = /\/node_modules\/yaml\//
const CHAT = /\/dist\/server\/chat\//

const modules = suite('start-up: modules loaded only where used')

modules('embedded social whoami loads neither undici, yaml nor the chat modules', async () => {
  const home = tempDir('plaza-modules-home-')
  const env = { PLAZA_DATA_DIR: path.join(home, 'data'), XDG_CONFIG_HOME: path.join(home, 'config'), PLAZA_LLM_BASE_URL: 'http://127.0.0.1:9/v1' }
  const loaded = (await whoamiModules('modules', env)).loaded()
  assert.ok(loaded.some((url) => url.endsWith('/dist/server/services.js')), 'the probe saw the embedded server load')
  assert.equal(loaded.filter((url) => UNDICI.test(url) || YAML.test(url) || CHAT.test(url)), [])
})

modules('plaza serve loads the chat configuration at start-up, undici only at the first chat request', async () => {
  const fake = await startFakeUpstream()
  const log = moduleLog()
  const { child, url, exited } = await startServe(['--port', '0', '--data-dir', tempDir()], { ...log.env, PLAZA_LLM_BASE_URL: `${fake.url}/v1`, PLAZA_LLM_CONFIG: '' })
  try {
    const atStart = log.loaded()
    assert.ok(atStart.some((url) => url.endsWith('/dist/server/chat/config.js')), 'validated at start-up')
    assert.equal(atStart.filter((url) => UNDICI.test(url)), [])
    fake.enqueue(reply({ pieces: ['Lazy', ' hello.'] }))
    const res = await post(`${url}/api/v1/chat/completions`, { messages: USER_HI })
    assert.is(res.status, 200)
    assert.is(((await res.json()) as { answer: string }).answer, 'Lazy hello.')
    assert.ok(log.loaded().some((url) => UNDICI.test(url)), 'undici loaded for the upstream call')
  } finally {
    child.kill('SIGINT')
    await exited
    await fake.close()
  }
})

/** What no one-shot social command needs (the server's optional parts, the terminal UI, a second oclif). */
const HEAVY: Array<[string, RegExp]> = [
  ["@libsql/client (its remote protocols: hrana, ws)", /\/node_modules\/(@libsql\/client|@libsql\/hrana-client|ws)\//],
  ['the migrator (the database is current)', /\/node_modules\/drizzle-orm\/(libsql\/)?migrator\.js$/],
  ['prom-client', /\/node_modules\/prom-client\//],
  ['sharp, shiki, resvg', /\/node_modules\/(sharp|shiki|@shikijs\/[^/]+|@resvg\/[^/]+)\//],
  ['ink, react, marked', /\/node_modules\/(ink|react|marked|marked-terminal)\//],
  ['the code image and execute schemas', /\/dist\/shared\/schemas\/(codeimage|execute)\.js$/],
  ["semver (oclif's engine check)", /\/node_modules\/semver\//],
  ["oclif's own files (the build bundles them into one)", /\/node_modules\/@oclif\/core\/lib\/(?!index\.js$)/],
]

function heavy(loaded: string[]): string[] {
  return HEAVY.flatMap(([name, pattern]) => loaded.filter((url) => pattern.test(url)).map((url) => `${name}: ${url}`))
}

modules('an embedded command on a current database loads nothing it does not use; a new data directory is migrated', async () => {
  const home = tempDir('plaza-modules-home-')
  const env = { PLAZA_DATA_DIR: path.join(home, 'data'), XDG_CONFIG_HOME: path.join(home, 'config') }
  const first = moduleLog()
  const log = await whoamiModules('light', env, { ...env, ...first.env })
  assert.ok(first.loaded().some((url) => /\/drizzle-orm\/migrator\.js$/.test(url)), 'a new database runs the migrations')
  const loaded = log.loaded()
  assert.ok(loaded.some((url) => url.endsWith('/dist/server/services.js')), 'the probe saw the embedded server load')
  assert.ok(loaded.some((url) => url.endsWith('/dist/vendor/oclif-core/index.cjs')), 'oclif came from the bundle')
  assert.equal(heavy(loaded), [])
  // The command and the server came from the CLI bundle: a few files, none of ours or zod's, drizzle's or tRPC's one by one.
  const files = log.files()
  assert.ok(files.some((url) => url.endsWith('/dist/bundle/social.whoami.js')), 'the bundled command ran')
  assert.equal(files.filter((url) => /\/dist\/(server|shared)\/|\/node_modules\/(zod|drizzle-orm|@trpc\/[^/]+)\//.test(url)), [])
  assert.ok(files.length < 100, `${files.length} files`)
})

modules('without the bundle (PLAZA_CLI_BUNDLE=0) an embedded command loads the dist/ modules and works the same', async () => {
  const home = tempDir('plaza-modules-home-')
  const env = { PLAZA_DATA_DIR: path.join(home, 'data'), XDG_CONFIG_HOME: path.join(home, 'config'), PLAZA_CLI_BUNDLE: '0' }
  const files = (await whoamiModules('unbundled', env)).files()
  assert.ok(files.some((url) => url.endsWith('/dist/cli/commands/social/whoami.js')), 'the dist/ command ran')
  assert.ok(files.some((url) => url.endsWith('/dist/server/services.js')), 'the dist/ server loaded')
  assert.equal(files.filter((url) => url.startsWith(BUNDLE)), [])
  assert.equal(heavy(files), [])
})

modules('a remote command loads neither the server, the database, nor all of undici', async () => {
  const server = await startTestServer()
  try {
    const home = tempDir('plaza-modules-home-')
    const env = { PLAZA_URL: server.url, XDG_CONFIG_HOME: path.join(home, 'config') }
    const loaded = (await whoamiModules('remotelight', env)).loaded()
    assert.ok(loaded.some((url) => url.endsWith('/dist/bundle/social.whoami.js')), 'the bundled command ran')
    // undici's fetch, Agent and FormData as bundled by the build (src/cli/vendor-undici.ts), none of its own files.
    assert.ok(loaded.some((url) => url.endsWith('/dist/vendor/undici/fetch.cjs')), 'the probe saw undici load')
    const unwanted = [/\/dist\/server\//, /\/node_modules\/(drizzle-orm|libsql|@libsql\/[^/]+|zod)\//, /\/node_modules\/undici\/(?!package\.json$)/]
    assert.equal([...heavy(loaded), ...loaded.filter((url) => unwanted.some((pattern) => pattern.test(url)))], [])
  } finally {
    await server.close()
  }
})

modules.run()
