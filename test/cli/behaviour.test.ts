/**
 * The CLI's contract with a shell: exit codes (1 error, 2 usage, 4 needs login), messages on stderr
 * without stack traces and nothing on stdout, the session file's permissions, --password-stdin,
 * PLAZA_TOKEN, logout revoking the token server-side, and a quick, clear failure for an unreachable server.
 */
import { readFileSync, rmSync, statSync } from 'node:fs'
import path from 'node:path'
import { isBlurhashValid } from 'blurhash'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registerUser, startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { closedPort, runCli, shell, writePng, type CliResult, type Shell } from './cli.js'

const PASSWORD = 'correct horse battery'
let server: TestServer
let dataDir: string
let embedded: Shell
const cleanup: string[] = []

/** A failure: the exit code, one message on stderr, nothing on stdout, no stack trace. */
function assertFailure(result: CliResult, code: number, message: RegExp) {
  assert.is(result.code, code, `exit code (stderr: ${result.stderr})`)
  assert.is(result.stdout, '', 'nothing on stdout')
  assert.match(result.stderr, message)
  assert.not.match(result.stderr, /\n\s+at .+\(.*:\d+:\d+\)/, 'no stack trace')
}

test.before(async () => {
  server = await startTestServer()
  dataDir = tempDir('plaza-cli-data-')
  embedded = shell({ dataDir })
  cleanup.push(dataDir, embedded.configHome)
  const registered = await embedded.run(['social', 'register', '-u', 'dinah', '-e', 'dinah@example.com', '--password-stdin'], { input: PASSWORD })
  assert.is(registered.code, 0, registered.stderr)
})

test.after(async () => {
  await server.close()
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true })
})

test('a command that needs a session, without one, says to log in and exits 4 (with or without --json)', async () => {
  const nobody = shell({ dataDir })
  cleanup.push(nobody.configHome)
  for (const args of [['social', 'whoami'], ['social', 'feed', '--json'], ['social', 'post', 'create', 'hi'], ['social', 'upload', 'post', '/dev/null']]) {
    assertFailure(await nobody.run(args), 4, /not logged in: run `plaza social login`/)
  }
})

test('an invalid or revoked token exits 4 too', async () => {
  assertFailure(await embedded.run(['social', 'whoami'], { env: { PLAZA_TOKEN: 'plz_not-a-real-token' } }), 4, /Invalid or expired token.*plaza social login/)
})

test('usage errors exit 2', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['social', 'like'], /Missing 1 required arg/],
    [['social', 'like', 'abc'], /Expected an integer but received: abc/],
    [['social', 'feed', '--bogus'], /Nonexistent flag: --bogus/],
    [['social', 'search', 'x', '--type', 'planets'], /Expected --type=planets to be one of/],
    [['social', 'story', 'create'], /give --text for a text story, or --image FILE/],
    [['social', 'profile', 'update'], /nothing to change/],
    [['social', 'explore', '--url', 'not a url'], /--url must be an http\(s\) URL/],
    [['social', 'upload', 'post', '/no/such/file.png'], /cannot read \/no\/such\/file\.png: no such file/],
    [['social', 'nope'], /^Error: unknown command "social nope": see `plaza social --help`\n$/],
  ]
  for (const [args, message] of cases) {
    const result = await embedded.run(args)
    assert.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`)
    assert.match(result.stderr, message)
    assert.not.match(result.stderr, /\n\s+at /)
  }
})

test('errors from the API exit 1 with its message, also with --json (stdout stays empty)', async () => {
  assertFailure(await embedded.run(['social', 'post', 'show', '999999']), 1, /^Error: Post not found\n$/)
  assertFailure(await embedded.run(['social', 'post', 'show', '999999', '--json']), 1, /^Error: Post not found\n$/)
  assertFailure(await embedded.run(['social', 'follow', 'dinah']), 1, /yourself/i)
  assertFailure(await embedded.run(['social', 'search', 'x']), 1, /at least 2 characters/)
  const notImage = path.join(dataDir, 'notes.txt')
  await import('node:fs').then((fs) => fs.writeFileSync(notImage, 'just text, not an image'))
  assertFailure(await embedded.run(['social', 'upload', 'post', notImage]), 1, /Unsupported file type/)
})

test('the session file is 0600 in a 0700 folder and holds the token; nothing printed does', async () => {
  const dir = path.join(embedded.configHome, 'plaza')
  assert.is(statSync(dir).mode & 0o777, 0o700)
  assert.is(statSync(path.join(dir, 'sessions.json')).mode & 0o777, 0o600)
  const sessions = embedded.sessions()
  const entry = sessions[`embedded:${dataDir}`]
  assert.ok(entry, 'keyed by the embedded data directory')
  assert.is(entry.username, 'dinah')
  assert.match(entry.token, /^plz_/)
  for (const text of embedded.transcript) assert.not.ok(text.includes(entry.token))
})

test('--password-stdin: login with the right password keeps a session; a wrong one exits 1; no TTY and no flag exits 2', async () => {
  const other = shell({ dataDir })
  cleanup.push(other.configHome)
  assertFailure(await other.run(['social', 'login', '-e', 'dinah@example.com', '--password-stdin'], { input: 'wrong password' }), 1, /Invalid/i)
  assertFailure(await other.run(['social', 'login', '-e', 'dinah@example.com']), 2, /pipe it with --password-stdin/)
  assertFailure(await other.run(['social', 'login', '-e', 'dinah@example.com', '--password-stdin']), 2, /no password on stdin/)
  // A trailing newline (echo, here-strings) is not part of the password.
  const ok = await other.json(['social', 'login', '-e', 'dinah', '--password-stdin'], { input: PASSWORD + '\n' })
  assert.is(ok.user.username, 'dinah')
  assert.not.ok('token' in ok)
  assert.is((await other.json(['social', 'whoami'])).username, 'dinah')
})

test('remote: sessions are per server; PLAZA_TOKEN overrides; logout revokes the token on the server', async () => {
  const carol = shell({ url: server.url })
  cleanup.push(carol.configHome)
  await carol.json(['social', 'register', '-u', 'carol', '-e', 'carol@example.com', '--password-stdin'], { input: PASSWORD })
  const sessions = carol.sessions()
  assert.equal(Object.keys(sessions), [server.url])
  const token = sessions[server.url].token
  assert.is((await server.request('GET', '/api/mobile/user/profile', { token })).status, 200)

  // Someone else's token given through the environment wins over the stored session.
  const other = await registerUser(server)
  assert.is((await carol.json(['social', 'whoami'], { env: { PLAZA_TOKEN: other.token } })).username, other.username)
  assert.is((await carol.json(['social', 'whoami'])).username, 'carol')

  const out = await carol.run(['social', 'logout'])
  assert.is(out.code, 0)
  assert.match(out.stdout, /logged out/)
  assert.is((await server.request('GET', '/api/mobile/user/profile', { token })).status, 401)
  assert.equal(carol.sessions(), {})
})

test('remote uploads: multipart to the server, the url printed; avatar upload sets the avatar', async () => {
  const erin = shell({ url: server.url })
  cleanup.push(erin.configHome)
  await erin.json(['social', 'register', '-u', 'erin', '-e', 'erin@example.com', '--password-stdin'], { input: PASSWORD })
  const png = await writePng(erin.configHome, 'avatar.png', 800, 600)
  const plain = await erin.run(['social', 'upload', 'avatar', png])
  assert.is(plain.code, 0, plain.stderr)
  assert.match(plain.stdout, new RegExp(`^${server.url}/uploads/avatars/[A-Za-z0-9_-]+\\.\\w+\\n$`))
  assert.is(plain.stderr, '', 'no progress when stderr is not a terminal')
  const profile = await erin.json(['social', 'whoami'])
  assert.is(`${server.url}/${profile.avatar}`, plain.stdout.trim())
  const served = await server.request('GET', `/${profile.avatar}`)
  assert.is(served.status, 200)

  // --image uploads the story file first, as on posts and comments (where it uploads a comment image); --media, its old name, still works.
  const story = await erin.json(['social', 'story', 'create', '--image', png, '--text', 'a caption', '--duration', '8'])
  assert.is(story.content_type, 'image')
  const byOldName = await erin.json(['social', 'story', 'create', '--media', png])
  assert.match(byOldName.media_url, /^uploads\/stories\//)
  assert.match(story.media_url, /^uploads\/stories\/[A-Za-z0-9_-]+\.\w+$/)
  assert.is(story.text_content, 'a caption')
  assert.is(story.duration, 8)
  const post = await erin.json(['social', 'post', 'create', '--image', png])
  assert.is(post.content, '')
  const comment = await erin.json(['social', 'comment', String(post.id), 'close-up', '--image', png])
  assert.match(comment.image, /^uploads\/comments\//)
  const detail = await server.request('GET', `/api/mobile/posts/detail/${post.id}`)
  // The detail page shows each top-level comment with its first replies (none here).
  const { replies, ...shown } = detail.body.data.comments[0]
  assert.equal(replies, [])
  assert.equal(shown, comment)
})

test('upload --json answers width, height and a BlurHash, remote and embedded alike (the embedded encoder thread lets the command exit)', async () => {
  const frank = shell({ url: server.url })
  cleanup.push(frank.configHome)
  await frank.json(['social', 'register', '-u', 'frank', '-e', 'frank@example.com', '--password-stdin'], { input: PASSWORD })
  for (const [who, name] of [[frank, 'remote'], [embedded, 'embedded']] as const) {
    const png = await writePng(who.configHome, 'wide.png', 300, 100)
    const result = await who.json(['social', 'upload', 'post', png])
    assert.equal([result.width, result.height], [300, 100], name)
    assert.ok(isBlurhashValid(result.blurhash).result, `${name}: ${result.blurhash}`)
  }
})

test('profile update changes only the given fields; --remove-avatar clears the avatar', async () => {
  const updated = await embedded.json(['social', 'profile', 'update', '--full-name', 'Dinah the Cat', '--bio', 'Purrs #cats'])
  assert.is(updated.full_name, 'Dinah the Cat')
  assert.is(updated.bio, 'Purrs #cats')
  const png = await writePng(embedded.configHome, 'me.png')
  const withAvatar = await embedded.json(['social', 'profile', 'update', '--avatar', png])
  assert.match(withAvatar.avatar, /^uploads\/avatars\//)
  assert.is(withAvatar.bio, 'Purrs #cats')
  const cleared = await embedded.json(['social', 'profile', 'update', '--remove-avatar'])
  assert.is(cleared.avatar, '')
  assert.is(cleared.full_name, 'Dinah the Cat')
})

test('an unreachable server is reported at once, exit 1', async () => {
  const port = await closedPort()
  const result = await runCli(['social', 'explore'], { env: { PLAZA_URL: `http://127.0.0.1:${port}`, XDG_CONFIG_HOME: embedded.configHome } })
  assertFailure(result, 1, new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}: ECONNREFUSED`))
})

test('something that is not a Plaza server is named as such', async () => {
  const result = await runCli(['social', 'explore'], { env: { PLAZA_URL: `${server.url}/elsewhere`, XDG_CONFIG_HOME: embedded.configHome } })
  assertFailure(result, 1, /unexpected answer from .*\/elsewhere \(HTTP 404\): is it a Plaza server\?/)
})

test('plain output when stdout is not a terminal: readable text, no colour codes', async () => {
  const frank = shell({ dataDir })
  cleanup.push(frank.configHome)
  await frank.json(['social', 'register', '-u', 'frank', '-e', 'frank@example.com', '--password-stdin'], { input: PASSWORD })
  await frank.run(['social', 'post', 'create', 'Curiouser and curiouser #alice'])
  const feed = await frank.run(['social', 'feed'])
  assert.is(feed.code, 0)
  assert.match(feed.stdout, /^#\d+ @frank · just now\n {2}Curiouser and curiouser #alice\n {2}0 likes · 0 comments\n$/)
  assert.is(feed.stderr, '')
  assert.not.ok(feed.stdout.includes('\x1b['))
  const profile = await frank.run(['social', 'whoami'])
  assert.match(profile.stdout, /^@frank · id \d+\n1 post · 0 followers · 0 following · 0 active stories\n$/)
})

test('help lists the commands with descriptions and examples', async () => {
  const root = await runCli(['--help'])
  assert.is(root.code, 0)
  for (const line of [/social\s+Use the social network/, /serve\s+Run the Plaza server/, /\$ plaza social register/]) assert.match(root.stdout, line)
  const social = await runCli(['social', '--help'])
  for (const id of ['register', 'login', 'logout', 'whoami', 'profile', 'follow', 'unfollow', 'followers', 'following', 'posts', 'feed', 'explore', 'like', 'unlike', 'comment', 'search', 'notifications']) {
    assert.match(social.stdout, new RegExp(`social ${id}\\s+\\S`), `social ${id} listed`)
  }
  for (const topic of ['post', 'story', 'notifications', 'upload', 'profile']) assert.match(social.stdout, new RegExp(`social ${topic}\\s+\\S`))
  const create = await runCli(['social', 'post', 'create', '--help'])
  assert.match(create.stdout, /EXAMPLES\n\s+\$ plaza social post create "Hello #plaza"/)
})

test('plaza version prints the line of plaza --version; --json the parts', async () => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  const line = `plaza/${version} ${process.platform}-${process.arch} node-${process.version}`
  const plain = await runCli(['version'])
  assert.is(plain.code, 0, plain.stderr)
  assert.is(plain.stdout, `${line}\n`)
  assert.is((await runCli(['--version'])).stdout, `${line}\n`)
  const json = await runCli(['version', '--json'])
  assert.equal(JSON.parse(json.stdout), { name: 'plaza', version, node: process.versions.node, platform: process.platform, arch: process.arch })
  const help = await runCli(['--help'])
  assert.match(help.stdout, /version\s+Print the version of plaza/)
})

test('shell completion: the autocomplete plugin knows the social commands', async () => {
  const env = { XDG_CACHE_HOME: tempDir('plaza-cli-cache-'), XDG_CONFIG_HOME: embedded.configHome }
  cleanup.push(env.XDG_CACHE_HOME)
  const result = await runCli(['autocomplete', '--refresh-cache'], { env })
  assert.is(result.code, 0, result.stderr)
  const bash = readFileSync(path.join(env.XDG_CACHE_HOME, 'plaza/autocomplete/functions/bash/plaza.bash'), 'utf8')
  assert.match(bash, /social:post:create --json --jq --url --data-dir --as --image --alt --private/)
  const script = await runCli(['autocomplete', 'script', 'bash'], { env })
  assert.match(script.stdout, /PLAZA_AC_BASH_SETUP_PATH/)
})

test.run()
