/**
 * `plaza api` (any REST path, remote and embedded, fields, --input, headers, -i, non-2xx) and `--jq`
 * on commands that print JSON, through the spawned binary.
 */
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { shell, type CliResult, type Shell } from './cli.js'

const PASSWORD = 'correct horse battery'
let server: TestServer
let dataDir: string
let remote: Shell
let embedded: Shell
const cleanup: string[] = []

const ok = (result: CliResult, what: string) => assert.is(result.code, 0, `${what}: ${result.stderr}`)

test.before(async () => {
  server = await startTestServer()
  dataDir = tempDir('plaza-cli-api-')
  remote = shell({ url: server.url })
  embedded = shell({ dataDir })
  cleanup.push(dataDir, remote.configHome, embedded.configHome)
  for (const [who, name] of [[remote, 'rita'], [embedded, 'emma']] as const) {
    ok(await who.run(['social', 'register', '-u', name, '-e', `${name}@example.com`, '--password-stdin'], { input: PASSWORD }), `register ${name}`)
  }
})

test.after(async () => {
  await server.close()
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true })
})

for (const [name, who, username] of [['remote', () => remote, 'rita'], ['embedded', () => embedded, 'emma']] as const) {
  test(`api (${name}): GET with the stored session prints the whole envelope pretty-printed; POST with -f/-F fields creates`, async () => {
    const profile = await who().run(['api', '/api/mobile/user/profile'])
    ok(profile, 'GET')
    const envelope = JSON.parse(profile.stdout)
    assert.is(envelope.status, 'success')
    assert.is(envelope.data.username, username)
    assert.ok(profile.stdout.startsWith('{\n  "status": "success"'), 'pretty-printed')

    // Fields make it a POST (no method given): -f a string, -F a typed value.
    const created = await who().run(['api', '/api/mobile/posts/create', '-f', 'content=Made with plaza api #cli', '-F', 'is_public=false'])
    ok(created, 'POST')
    const post = JSON.parse(created.stdout).data
    assert.is(post.content, 'Made with plaza api #cli')
    assert.is(post.is_public, false)

    // METHOD first; a GET's fields become the query string.
    const mine = await who().run(['api', 'GET', `/api/mobile/posts/user/${username}`, '-F', 'limit=1'])
    ok(mine, 'GET with fields')
    const page = JSON.parse(mine.stdout).data
    assert.is(page.posts.length, 1)
    assert.is(page.posts[0].id, post.id)

    // PUT with -X, and the utility mount.
    const bio = await who().run(['api', '-X', 'PUT', '/api/mobile/user/update', '-f', 'bio=set through the API'])
    ok(bio, 'PUT')
    assert.is(JSON.parse(bio.stdout).data.bio, 'set through the API')
    const uptime = await who().run(['api', '/api/uptime', '--jq', '.uptime_seconds | type'])
    ok(uptime, 'utility mount')
    assert.is(uptime.stdout, 'number\n')
  })

  test(`api (${name}): --input FILE and --input - send the body as is; -H and -i`, async () => {
    const file = path.join(who().configHome, 'post.json')
    writeFileSync(file, JSON.stringify({ content: 'from a file' }))
    const fromFile = await who().run(['api', '/api/mobile/posts/create', '--input', file, '--jq', '.data.content'])
    ok(fromFile, '--input FILE')
    assert.is(fromFile.stdout, 'from a file\n')
    const fromStdin = await who().run(['api', 'POST', '/api/mobile/posts/create', '--input', '-', '--jq', '.data.content'], { input: '{"content":"from stdin"}' })
    ok(fromStdin, '--input -')
    assert.is(fromStdin.stdout, 'from stdin\n')

    const included = await who().run(['api', '/api/mobile/user/profile', '-i', '-H', 'X-Request-Id: cli-test-1'])
    ok(included, '-i')
    const [head, body] = included.stdout.split('\n\n')
    assert.match(head, /^HTTP\/1\.1 200 OK\n/)
    assert.match(head, /\ncontent-type: application\/json/)
    assert.match(head, /\nx-request-id: cli-test-1(\n|$)/)
    assert.is(JSON.parse(body).data.username, username)
  })

  test(`api (${name}): a non-2xx answer prints its body on stdout, one line on stderr, exit 1; 401 exits 4`, async () => {
    const missing = await who().run(['api', '/api/mobile/posts/detail/999999'])
    assert.is(missing.code, 1)
    assert.is(JSON.parse(missing.stdout).message, 'Post not found')
    assert.is(missing.stderr, 'Error: HTTP 404: Post not found\n')

    const invalid = await who().run(['api', 'POST', '/api/mobile/posts/create', '--input', '-'], { input: '{not json' })
    assert.is(invalid.code, 1)
    assert.is(JSON.parse(invalid.stdout).status, 'error')
    assert.match(invalid.stderr, /^Error: HTTP 400: /)

    const anonymous = await who().run(['api', '/api/mobile/posts/feed'], { env: { PLAZA_TOKEN: 'plz_not-a-real-token' } })
    assert.is(anonymous.code, 4)
    assert.is(JSON.parse(anonymous.stdout).status, 'error')
    assert.match(anonymous.stderr, /^Error: HTTP 401: .*plaza social login/)
  })
}

test('api: usage errors exit 2 before any request', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['api', 'BREW', '/api/uptime'], /unknown method "BREW"/],
    [['api', 'https://example.com/api/uptime'], /PATH is a path on the server/],
    [['api', '/api/mobile/posts/create', '-f', 'novalue'], /-f takes key=value/],
    [['api', '/api/mobile/posts/create', '-F', 'content=@/no/such/file'], /cannot read \/no\/such\/file: no such file/],
    [['api', '/api/mobile/posts/create', '--input', '/no/such.json'], /cannot read \/no\/such\.json: no such file/],
    [['api', '/api/uptime', '-H', 'no colon'], /-H takes "Name: value"/],
  ]
  for (const [args, message] of cases) {
    const result = await embedded.run(args)
    assert.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`)
    assert.is(result.stdout, '')
    assert.match(result.stderr, /^Error: .*\n$/)
    assert.match(result.stderr, message)
  }
})

test('--jq filters the JSON of ordinary commands (implies --json; strings raw); a bad filter exits 2 before the command runs', async () => {
  ok(await embedded.run(['social', 'post', 'create', 'one like']), 'post')
  const me = await embedded.run(['social', 'whoami', '--jq', '.username'])
  ok(me, 'whoami --jq')
  assert.is(me.stdout, 'emma\n')

  const ids = await embedded.run(['social', 'posts', 'emma', '--jq', '.posts[] | .id'])
  ok(ids, 'posts --jq')
  const listed = ids.stdout.trim().split('\n').map(Number)
  assert.ok(listed.length >= 3 && listed.every(Number.isInteger), ids.stdout)

  const liked = await embedded.json(['social', 'posts', 'emma'])
  await embedded.run(['social', 'like', String(liked.posts[0].id)])
  const popular = await embedded.run(['social', 'posts', 'emma', '--jq', '.posts | map(select(.likes_count > 0)) | map(.id)'])
  ok(popular, 'map(select(...))')
  assert.equal(JSON.parse(popular.stdout), [liked.posts[0].id])

  // The operator commands too.
  const actions = await embedded.run(['admin', 'actions', '--data-dir', dataDir, '--jq', 'length'])
  ok(actions, 'admin --jq')
  assert.is(actions.stdout, '0\n')

  const before = (await embedded.json(['social', 'posts', 'emma'])).posts.length
  const bad = await embedded.run(['social', 'post', 'create', 'never posted', '--jq', '.posts[['])
  assert.is(bad.code, 2)
  assert.is(bad.stdout, '')
  assert.match(bad.stderr, /^Error: --jq: syntax error.*\n$/)
  assert.is((await embedded.json(['social', 'posts', 'emma'])).posts.length, before, 'the command did not run')

  const runtime = await embedded.run(['social', 'whoami', '--jq', '.username | .x'])
  assert.is(runtime.code, 1)
  assert.match(runtime.stderr, /^Error: --jq: Cannot index string with string \("x"\)\n$/)
})

test.run()
