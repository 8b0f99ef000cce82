import { existsSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runCli } from '../helpers/cli.js'
import { registerUser, startTestServer, tempDir, type TestServer } from '../helpers/server.js'

const BUILT = fileURLToPath(new URL('../../dist/cli/commands/admin/verify.js', import.meta.url))

let server: TestServer
let dataDir: string
test.before(async () => {
  if (!existsSync(BUILT)) throw new Error('dist/ is missing admin verify: run `npm run build` first (npm test does)')
  dataDir = tempDir()
  server = await startTestServer({ dataDir })
})
test.after(async () => {
  await server.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const verified = async (token: string, id: number) =>
  (await server.request('GET', `/api/mobile/user/profile/${id}`, { token })).body.data.is_verified as boolean

test('admin verify sets is_verified (username case-insensitive); --unset clears it', async () => {
  const alice = await registerUser(server, 'verify_alice')
  const run = await runCli(['admin', 'verify', 'VERIFY_ALICE', '--data-dir', dataDir])
  assert.is(run.code, 0, run.stderr)
  assert.match(run.stdout, /verify_alice is now verified/)
  assert.is(await verified(alice.token, alice.id), true)
  // the badge shows on the user's posts too
  await server.request('POST', '/api/mobile/posts/create', { token: alice.token, body: { content: 'badge' } })
  const posts = await server.request('GET', `/api/mobile/posts/user/${alice.id}`)
  assert.is(posts.body.data.posts[0].is_verified, true)

  const unset = await runCli(['admin', 'verify', 'verify_alice', '--unset'], { env: { PLAZA_DATA_DIR: dataDir } })
  assert.is(unset.code, 0, unset.stderr)
  assert.match(unset.stdout, /no longer verified/)
  assert.is(await verified(alice.token, alice.id), false)
})

test('--json prints the profile', async () => {
  const bob = await registerUser(server, 'verify_bob')
  const run = await runCli(['admin', 'verify', 'verify_bob', '--data-dir', dataDir, '--json'])
  assert.is(run.code, 0, run.stderr)
  const profile = JSON.parse(run.stdout)
  assert.is(profile.id, bob.id)
  assert.is(profile.is_verified, true)
})

test('an unknown user is a clear error with exit 1; so is a directory without a database', async () => {
  const run = await runCli(['admin', 'verify', 'nobody_here', '--data-dir', dataDir])
  assert.is(run.code, 1)
  assert.match(run.stderr, /no user named "nobody_here"/)
  assert.not.match(run.stderr, /at .*\.js:\d+/, 'no stack trace')
  const empty = tempDir()
  try {
    const missing = await runCli(['admin', 'verify', 'someone', '--data-dir', empty])
    assert.is(missing.code, 1)
    assert.match(missing.stderr, /no Plaza database/)
    assert.not.ok(existsSync(`${empty}/plaza.db`), 'nothing was created')
  } finally {
    rmSync(empty, { recursive: true, force: true })
  }
  const usage = await runCli(['admin', 'verify', '--data-dir', dataDir])
  assert.is(usage.code, 2)
})

test.run()
