/**
 * `plaza admin backup` and `plaza admin restore`, through the built binary: a consistent backup
 * while a server runs and writes, restored into a new data directory; refusals that change nothing.
 */
import { copyFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient } from '@libsql/client'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runCli } from '../helpers/cli.js'
import { registerUser, startTestServer, tempDir, type TestServer } from '../helpers/server.js'

const BUILT = fileURLToPath(new URL('../../dist/cli/commands/admin/backup.js', import.meta.url))

let server: TestServer
let work: string
test.before(async () => {
  if (!existsSync(BUILT)) throw new Error('dist/ is missing admin backup: run `npm run build` first (npm test does)')
  server = await startTestServer()
  work = tempDir('plaza-backup-')
})
test.after(async () => {
  await server.close()
  rmSync(work, { recursive: true, force: true })
})

const postCount = async (target: TestServer, token: string, userId: number) =>
  (await target.request('GET', `/api/mobile/posts/user/${userId}?limit=100`, { token })).body.data.posts.length as number

test('backup while the server is running and writing; restore into a new data directory has the data', async () => {
  const alice = await registerUser(server, 'backup_alice')
  await server.request('POST', '/api/mobile/posts/create', { token: alice.token, body: { content: 'before the backup' } })
  let writing = true
  let written = 0
  const writer = (async () => {
    while (writing) {
      const res = await server.request('POST', '/api/mobile/posts/create', { token: alice.token, body: { content: `during ${written}` } })
      assert.is(res.status, 201, 'writes keep succeeding during the backup')
      written++
    }
  })()
  const file = path.join(work, 'nightly.db')
  const run = await runCli(['admin', 'backup', file, '--data-dir', server.dataDir])
  writing = false
  await writer
  assert.is(run.code, 0, run.stderr)
  assert.match(run.stdout, /backed up .* to .*nightly\.db/)
  assert.is(statSync(file).mode & 0o777, 0o600)

  const restored = path.join(work, 'restored')
  const restore = await runCli(['admin', 'restore', file, '--data-dir', restored, '--force', '--json'])
  assert.is(restore.code, 0, restore.stderr)
  const summary = JSON.parse(restore.stdout)
  assert.ok(summary.users >= 1)
  assert.is(statSync(path.join(restored, 'plaza.db')).mode & 0o777, 0o600)

  const copy = await startTestServer({ dataDir: restored })
  try {
    const login = await copy.request('POST', '/api/mobile/auth/login', { body: { email: 'backup_alice@example.com', password: 'correct horse' } })
    assert.is(login.status, 200, 'the account and its password hash are in the backup')
    const posts = await postCount(copy, login.body.data.token, alice.id)
    assert.ok(posts >= 1 && posts <= 1 + written, `a snapshot between the start and the end of the backup (${posts} of ${1 + written})`)
  } finally {
    await copy.close()
  }
})

test('backup refuses to replace a file unless --force; other mistakes are clear errors', async () => {
  const file = path.join(work, 'existing.db')
  writeFileSync(file, 'keep me')
  const refused = await runCli(['admin', 'backup', file, '--data-dir', server.dataDir])
  assert.is(refused.code, 1)
  assert.match(refused.stderr, /already exists; pass --force/)
  assert.is(readFileSync(file, 'utf8'), 'keep me')

  const forced = await runCli(['admin', 'backup', file, '--data-dir', server.dataDir, '--force', '--json'])
  assert.is(forced.code, 0, forced.stderr)
  assert.equal(JSON.parse(forced.stdout), { file, bytes: statSync(file).size })
  assert.is(readFileSync(file).subarray(0, 15).toString(), 'SQLite format 3')

  const empty = tempDir()
  try {
    const missing = await runCli(['admin', 'backup', path.join(work, 'x.db'), '--data-dir', empty])
    assert.is(missing.code, 1)
    assert.match(missing.stderr, /no Plaza database/)
    assert.not.ok(existsSync(path.join(empty, 'plaza.db')))
  } finally {
    rmSync(empty, { recursive: true, force: true })
  }
  assert.is((await runCli(['admin', 'backup', '--data-dir', server.dataDir])).code, 2)
})

test('restore refuses a file that is not a Plaza database, or one from a newer Plaza, and changes nothing', async () => {
  const target = path.join(work, 'target')
  const good = path.join(work, 'good.db')
  assert.is((await runCli(['admin', 'backup', good, '--data-dir', server.dataDir])).code, 0)
  assert.is((await runCli(['admin', 'restore', good, '--data-dir', target, '--force'])).code, 0)
  const before = readFileSync(path.join(target, 'plaza.db'))

  const text = path.join(work, 'notes.txt')
  writeFileSync(text, 'these are not the rows you are looking for')
  const otherDb = path.join(work, 'other.db')
  const other = createClient({ url: `file:${otherDb}` })
  await other.execute('CREATE TABLE things (id integer)')
  other.close()
  const newer = path.join(work, 'newer.db')
  copyFileSync(good, newer)
  const future = createClient({ url: `file:${newer}` })
  await future.execute("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from-the-future', 99999999999999)")
  future.close()

  for (const [file, message] of [
    [text, /not a Plaza database \(not an SQLite file\)/],
    [otherDb, /not a Plaza database \(no __drizzle_migrations table\)/],
    [newer, /newer or different Plaza/],
    [path.join(work, 'missing.db'), /is not a file/],
  ] as const) {
    const run = await runCli(['admin', 'restore', file, '--data-dir', target, '--force'])
    assert.is(run.code, 1, `${file}: ${run.stderr}`)
    // oclif wraps long errors over lines that start with ›
    assert.match(run.stderr.replace(/\s*\n\s*›\s*/g, ' '), message)
    assert.match(run.stderr.replace(/\s*\n\s*›\s*/g, ' '), path.basename(file), 'names the file given')
    assert.not.match(run.stderr, /at .*\.js:\d+/, 'no stack trace')
  }
  assert.ok(Buffer.compare(readFileSync(path.join(target, 'plaza.db')), before) === 0, 'the database is untouched')
})

test('restore refuses while the server has the database open, and without --force when it cannot ask', async () => {
  const file = path.join(work, 'while-running.db')
  assert.is((await runCli(['admin', 'backup', file, '--data-dir', server.dataDir])).code, 0)
  const busy = await runCli(['admin', 'restore', file, '--data-dir', server.dataDir, '--force'])
  assert.is(busy.code, 1)
  assert.match(busy.stderr, /in use: stop the server/)
  assert.is((await server.request('GET', '/health')).status, 200)

  const unconfirmed = await runCli(['admin', 'restore', file, '--data-dir', path.join(work, 'elsewhere')])
  assert.is(unconfirmed.code, 2)
  assert.match(unconfirmed.stderr, /pass --force to confirm/)
  assert.not.ok(existsSync(path.join(work, 'elsewhere', 'plaza.db')))
})

test.run()
