/**
 * `plaza serve` on a libsql server: it says at start-up, in one line, what keeps it from serving
 * (a server it cannot reach, a wrong token), and warns that uploads stay on this host's disk when
 * no shared storage is configured; with the database remote, it serves as usual.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadConfig } from '../../src/server/config.js'
import { localUploadsWarning } from '../../src/server/index.js'
import { runCli, startServe } from '../helpers/cli.js'
import { startSqld } from '../helpers/sqld.js'
import { tempDir } from '../helpers/server.js'

/** What oclif printed, unwrapped: it breaks an error or warning line at the terminal's width and prefixes each piece with ` ›`. */
const unwrapped = (text: string) => text.replace(/\s*\n\s*›\s*/g, ' ')

test('a libsql server that cannot be reached or refuses the token: exit 1, one line, no token in it', async () => {
  const server = await startSqld({ auth: true })
  try {
    const refused = await runCli(['serve', '--port', '0', '--workers', '1', '--data-dir', tempDir()], {
      env: { PLAZA_DATABASE_URL: server.url, PLAZA_DATABASE_AUTH_TOKEN: 'wrong-token-value' },
    })
    assert.is(refused.code, 1, refused.stderr)
    assert.match(unwrapped(refused.stderr), /cannot reach the libsql server at http:\/\/127\.0\.0\.1:\d+: .*401.*PLAZA_DATABASE_AUTH_TOKEN/)
    assert.not.match(refused.stderr + refused.stdout, /wrong-token-value|\n\s+at /)
  } finally {
    await server.close()
  }
  const gone = await runCli(['serve', '--port', '0', '--workers', '1', '--data-dir', tempDir()], { env: { PLAZA_DATABASE_URL: server.url } })
  assert.is(gone.code, 1, gone.stderr)
  assert.match(unwrapped(gone.stderr), /cannot reach the libsql server at http:\/\/127\.0\.0\.1:\d+/)
  assert.not.match(gone.stderr, /\n\s+at /)
})

test('serving from a real sqld: a warning that uploads stay on this host, then sign-up, a post, its detail and a prefix search work', async () => {
  const server = await startSqld()
  const serve = await startServe(['--port', '0', '--workers', '1', '--data-dir', tempDir()], { PLAZA_DATABASE_URL: server.url, PLAZA_STORAGE_URL: '' })
  try {
    assert.match(unwrapped(serve.output()), /uploads are stored in .*: with several hosts, set PLAZA_STORAGE_URL/)
    const res = await fetch(`${serve.url}/api/mobile/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'remote_alice', email: 'remote_alice@example.com', password: 'correct horse', full_name: 'Alice' }),
    })
    assert.is(res.status, 201)
    // Past the start-up checks (FTS5, foreign keys) and the migrations: a write, its read-back and a search, each through sqld.
    const token = ((await res.json()) as { data: { token: string } }).data.token
    const call = (method: string, route: string, body?: unknown) =>
      fetch(`${serve.url}/api/mobile${route}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
    const created = await call('POST', '/posts/create', { content: 'Served from sqld #remoteplaza', is_public: true })
    assert.is(created.status, 201, await created.clone().text())
    const post = ((await created.json()) as { data: { id: number } }).data
    const detail = await call('GET', `/posts/detail/${post.id}`)
    assert.is(detail.status, 200)
    assert.match(JSON.stringify(await detail.json()), /Served from sqld/)
    const found = (await (await call('GET', '/search/posts?q=serv')).json()) as { data: { posts: Array<{ id: number }> } }
    assert.equal(found.data.posts.map((p) => p.id), [post.id])
  } finally {
    serve.child.kill('SIGTERM')
    await serve.exited
    await server.close()
  }
})

test('the uploads warning: only for a shared database with uploads in the data directory', () => {
  const warning = (env: NodeJS.ProcessEnv) => localUploadsWarning(loadConfig({ dataDir: '/srv/plaza' }, env))
  assert.is(warning({}), null)
  assert.match(String(warning({ PLAZA_DATABASE_URL: 'libsql://db.example.com' })), /uploads are stored in \/srv\/plaza/)
  assert.match(String(warning({ PLAZA_DATABASE_URL: 'libsql://db.example.com', PLAZA_STORAGE_URL: 'local' })), /PLAZA_STORAGE_URL/)
  assert.is(warning({ PLAZA_DATABASE_URL: 'libsql://db.example.com', PLAZA_STORAGE_URL: 's3://media/plaza' }), null)
})

test.run()
