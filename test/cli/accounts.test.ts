/**
 * Several accounts per server (accounts, accounts switch, --as, login adds, logout removes the active
 * one, the old one-session file still read), "did you mean", the right error first (unreachable
 * before not logged in), one error format, and embedded upload URLs that name the file.
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { closedPort, runCli, shell, writePng, type CliResult } from './cli.js'

const PASSWORD = 'correct horse battery'
let server: TestServer
const cleanup: string[] = []

/** A failure as every command reports one: the exit code, exactly one `Error: …` line on stderr, nothing on stdout. */
function assertOneLine(result: CliResult, code: number, message: RegExp) {
  assert.is(result.code, code, `exit code (stderr: ${result.stderr})`)
  assert.is(result.stdout, '')
  assert.match(result.stderr, /^Error: [^\n]+\n$/, `one line: ${JSON.stringify(result.stderr)}`)
  assert.not.match(result.stderr, /›/)
  assert.match(result.stderr, message)
}

test.before(async () => {
  server = await startTestServer()
})

test.after(async () => {
  await server.close()
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true })
})

test('two accounts on one server: login adds, accounts lists (* active), switch, --as, logout removes the active one', async () => {
  const me = shell({ url: server.url })
  cleanup.push(me.configHome)
  await me.json(['social', 'register', '-u', 'ann', '-e', 'ann@example.com', '--password-stdin'], { input: PASSWORD })
  await me.json(['social', 'register', '-u', 'ben', '-e', 'ben@example.com', '--password-stdin'], { input: PASSWORD })

  // The second registration added an account and made it active; the first is still kept.
  const listed = await me.run(['social', 'accounts'])
  assert.is(listed.code, 0, listed.stderr)
  assert.match(listed.stdout, /^ {2}@ann {2}\(session expires .+ UTC\)\n\* @ben {2}\(session expires .+ UTC\)\n$/)
  assert.equal(
    (await me.json(['social', 'accounts'])).map((account: { username: string; active: boolean }) => [account.username, account.active]),
    [['ann', false], ['ben', true]],
  )
  assert.is((await me.json(['social', 'whoami'])).username, 'ben')

  // --as picks another kept account for one command; the active one does not change.
  await me.json(['social', 'post', 'create', 'posted as ann', '--as', 'ann'])
  assert.is((await me.json(['social', 'posts', 'ann'])).posts[0].content, 'posted as ann')
  assert.is((await me.json(['social', 'whoami'])).username, 'ben')
  assert.is((await me.json(['social', 'whoami', '--as', '@ANN'])).username, 'ann', 'usernames are case-insensitive, @ optional')

  const switched = await me.run(['social', 'accounts', 'switch', 'ann'])
  assert.is(switched.code, 0, switched.stderr)
  assert.match(switched.stdout, /@ann is now the active account/)
  assert.is((await me.json(['social', 'whoami'])).username, 'ann')
  assert.is((await me.run(['api', '/api/mobile/user/profile', '--jq', '.data.username'])).stdout, 'ann\n', 'plaza api uses the active account')

  assertOneLine(await me.run(['social', 'accounts', 'switch', 'zed']), 1, /no account @zed kept for .*kept: @ann, @ben/)
  assertOneLine(await me.run(['social', 'whoami', '--as', 'zed']), 4, /no account @zed kept for/)
  assertOneLine(await me.run(['social', 'explore', '--as', 'zed']), 4, /no account @zed kept for/)

  // No token is ever shown; the file stays 0600.
  for (const text of me.transcript) assert.not.match(text, /plz_[A-Za-z0-9_-]{20,}/)
  assert.is(statSync(path.join(me.configHome, 'plaza', 'sessions.json')).mode & 0o777, 0o600)

  // Logout revokes the active account's session and forgets it; the other becomes active.
  const annToken = me.sessions()[server.url].token
  const out = await me.run(['social', 'logout'])
  assert.is(out.code, 0, out.stderr)
  assert.match(out.stdout, /logged out; @ben is now the active account/)
  assert.is((await server.request('GET', '/api/mobile/user/profile', { token: annToken })).status, 401)
  assert.equal((await me.json(['social', 'accounts'])).map((account: { username: string }) => account.username), ['ben'])
  assert.is((await me.json(['social', 'whoami'])).username, 'ben')

  // Logging out --as another account removes that one.
  await me.json(['social', 'login', '-e', 'ann', '--password-stdin'], { input: PASSWORD })
  assert.is((await me.run(['social', 'logout', '--as', 'ben'])).code, 0)
  assert.equal(await me.json(['social', 'accounts']), [{ username: 'ann', expires_at: me.sessions()[server.url].expires_at, active: true }])
})

test('a sessions.json from before (one session per server) is still read, and rewritten in the new format on the next change', async () => {
  const me = shell({ url: server.url })
  cleanup.push(me.configHome)
  const carl = await server.request('POST', '/api/mobile/auth/register', { body: { username: 'carl', email: 'carl@example.com', password: PASSWORD } })
  const dir = path.join(me.configHome, 'plaza')
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const old = { [server.url]: { token: carl.body.data.token, username: 'carl', expires_at: carl.body.data.expires_at } }
  writeFileSync(path.join(dir, 'sessions.json'), JSON.stringify(old), { mode: 0o600 })

  assert.is((await me.json(['social', 'whoami'])).username, 'carl')
  assert.equal(await me.json(['social', 'accounts']), [{ username: 'carl', expires_at: carl.body.data.expires_at, active: true }])
  await me.json(['social', 'register', '-u', 'dora', '-e', 'dora@example.com', '--password-stdin'], { input: PASSWORD })
  const file = JSON.parse(readFileSync(path.join(dir, 'sessions.json'), 'utf8'))
  assert.is(file.version, 2)
  assert.equal(Object.keys(file.targets[server.url].accounts), ['carl', 'dora'])
  assert.is(file.targets[server.url].active, 'dora')
  assert.is((await me.json(['social', 'whoami', '--as', 'carl'])).username, 'carl')
})

test('the right error first: an unreachable server is reported as such (exit 1) even with no session, not "not logged in"', async () => {
  const port = await closedPort()
  const nobody = shell({ url: `http://127.0.0.1:${port}` })
  cleanup.push(nobody.configHome)
  for (const args of [['social', 'whoami'], ['social', 'feed', '--json'], ['social', 'logout'], ['api', '/api/mobile/user/profile']]) {
    assertOneLine(await nobody.run(args), 1, new RegExp(`^Error: cannot reach http://127\\.0\\.0\\.1:${port}: ECONNREFUSED\\n$`))
  }
  // A server that answers, with no session: that is the login's problem (exit 4).
  const fresh = shell({ url: server.url })
  cleanup.push(fresh.configHome)
  assertOneLine(await fresh.run(['social', 'whoami']), 4, /not logged in/)
})

test('did you mean: a mistyped command or topic gets one line with the nearest command, exit 2', async () => {
  const cases: Array<[string[], string]> = [
    [['social', 'fed'], 'unknown command "social fed": did you mean "plaza social feed"?'],
    [['socail', 'feed'], 'unknown command "socail feed": did you mean "plaza social feed"?'],
    [['social', 'post', 'craete'], 'unknown command "social post craete": did you mean "plaza social post create"?'],
    [['social', 'acounts'], 'unknown command "social acounts": did you mean "plaza social accounts"?'],
    [['apii', '/api/uptime'], 'unknown command "apii /api/uptime": did you mean "plaza api"?'],
    [['social', 'xyzzy'], 'unknown command "social xyzzy": see `plaza social --help`'],
    [['frobnicate'], 'unknown command "frobnicate": see `plaza --help`'],
  ]
  for (const [args, message] of cases) {
    const result = await runCli(args)
    assert.is(result.code, 2, args.join(' '))
    assert.is(result.stdout, '')
    assert.is(result.stderr, `Error: ${message}\n`)
  }
})

test('one error format: oclif parse errors, server errors and operator-command errors are all one `Error:` line', async () => {
  const dataDir = tempDir('plaza-cli-errors-')
  cleanup.push(dataDir)
  const me = shell({ dataDir })
  cleanup.push(me.configHome)
  await me.json(['social', 'register', '-u', 'eve', '-e', 'eve@example.com', '--password-stdin'], { input: PASSWORD })
  // oclif's own parse errors (they used to come as ` ›   Error:` blocks with the usage after them).
  assertOneLine(await me.run(['social', 'like']), 2, /^Error: Missing 1 required arg: id \(post id\)\n$/)
  assertOneLine(await me.run(['social', 'feed', '--limit', 'many']), 2, /Expected an integer but received: many/)
  assertOneLine(await me.run(['admin', 'verify']), 2, /^Error: Missing 1 required arg: username/)
  assertOneLine(await me.run(['admin', 'verify', 'eve', '--bogus']), 2, /Nonexistent flag: --bogus/)
  assertOneLine(await me.run(['serve', '--port', 'abc']), 2, /Expected an integer but received: abc/)
  // The server's refusal, embedded and through the operator commands.
  assertOneLine(await me.run(['social', 'post', 'show', '424242']), 1, /^Error: Post not found\n$/)
  assertOneLine(await me.run(['admin', 'verify', 'nobody', '--data-dir', dataDir]), 1, /^Error: no user named "nobody"\n$/)
  assertOneLine(await me.run(['admin', 'verify', 'eve', '--data-dir', path.join(dataDir, 'none'), '--json']), 1, /^Error: no Plaza database in /)
})

test('embedded uploads print where the file really is (a file:// URL in the data directory), not a URL no server answers', async () => {
  const dataDir = tempDir('plaza-cli-uploads-')
  cleanup.push(dataDir)
  const me = shell({ dataDir })
  cleanup.push(me.configHome)
  await me.json(['social', 'register', '-u', 'fay', '-e', 'fay@example.com', '--password-stdin'], { input: PASSWORD })
  const png = await writePng(me.configHome, 'pic.png', 64, 48)
  const printed = await me.run(['social', 'upload', 'post', png])
  assert.is(printed.code, 0, printed.stderr)
  const url = printed.stdout.trim()
  assert.match(url, /^file:\/\/\/.+\/uploads\/posts\/[A-Za-z0-9_-]+\.png$/)
  const file = fileURLToPath(url)
  assert.ok(file.startsWith(dataDir + path.sep), `${file} is under ${dataDir}`)
  assert.equal(readFileSync(file).subarray(1, 4).toString(), 'PNG')
  const json = await me.json(['social', 'upload', 'avatar', png])
  assert.ok(fileURLToPath(json.url).startsWith(dataDir), json.url)
  assert.match(json.path, /^uploads\/avatars\//)
  // With a public URL configured, that is where files are served from.
  const published = await me.run(['social', 'upload', 'post', png], { env: { PLAZA_PUBLIC_URL: 'https://plaza.example.com' } })
  assert.match(published.stdout, /^https:\/\/plaza\.example\.com\/uploads\/posts\/[A-Za-z0-9_-]+\.png\n$/)
})

test.run()
