/** `plaza util media`, run as the built binary (`npm run build` first; `npm test` does it): embedded and remote. */
import { rmSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runCli } from '../helpers/cli.js'
import { startTestServer, tempDir } from '../helpers/server.js'
import { startSite, videoPage, type Site } from './site.js'

let site: Site
const dir = tempDir()
test.before(async () => {
  site = await startSite()
  site.html('/video', videoPage('/oembed'))
  site.route('/oembed', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'video', title: 'CLI title', author_name: 'Ann', provider_name: 'Example Tube' })))
})
test.after(async () => {
  await site.close()
  rmSync(dir, { recursive: true, force: true })
})

const plaza = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd: dir, env: { PLAZA_DATA_DIR: path.join(dir, '.plaza'), ...env } })

test('embedded, --no-fetch: a readable summary of the pattern; --json prints the answer', async () => {
  const run = await plaza(['util', 'media', 'https://youtu.be/dQw4w9WgXcQ', '--no-fetch'])
  assert.is(run.code, 0, run.stderr)
  const lines = run.stdout.trim().split('\n')
  assert.is(lines[0], 'YouTube video (from the URL pattern, not fetched)')
  assert.ok(lines.includes('  provider   YouTube'), run.stdout)
  assert.ok(lines.includes('  id         dQw4w9WgXcQ'), run.stdout)
  assert.ok(lines.includes('  thumbnail  https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg'), run.stdout)
  assert.ok(lines.includes('  embed      https://www.youtube.com/embed/dQw4w9WgXcQ'), run.stdout)
  const json = await plaza(['util', 'media', 'https://open.spotify.com/album/4aawyAB9vmqN3uQ7FjRGTy', '--no-fetch', '--json'])
  assert.is(json.code, 0, json.stderr)
  const answer = JSON.parse(json.stdout)
  assert.equal([answer.provider, answer.type, answer.id, answer.fetched], ['Spotify', 'album', '4aawyAB9vmqN3uQ7FjRGTy', false])
})

test('embedded: the page is fetched through the fetch guard (loopback refused unless PLAZA_FETCH_ALLOW_PRIVATE=1)', async () => {
  const refused = await plaza(['util', 'media', `${site.url}/video`])
  assert.is(refused.code, 1)
  assert.match(refused.stderr, /127\.0\.0\.1 is a private or loopback address/)
  const run = await plaza(['util', 'media', `${site.url}/video`, '--json'], { PLAZA_FETCH_ALLOW_PRIVATE: '1' })
  assert.is(run.code, 0, run.stderr)
  const answer = JSON.parse(run.stdout)
  assert.equal([answer.title, answer.author, answer.thumbnail, answer.source.title], ['CLI title', 'Ann', `${site.url}/img/thumb.jpg`, 'oembed'])
})

test('remote: the server answers; bad input is a usage error', async () => {
  const server = await startTestServer({ env: { PLAZA_FETCH_ALLOW_PRIVATE: '1' } })
  try {
    const run = await plaza(['util', 'media', `${site.url}/video`, '--url', server.url])
    assert.is(run.code, 0, run.stderr)
    assert.match(run.stdout, /^Example Tube video: CLI title\n/)
    assert.match(run.stdout, /  author +Ann\n/)
    const bad = await plaza(['util', 'media', 'ftp://example.com/x', '--url', server.url])
    assert.is(bad.code, 2, bad.stderr)
    assert.match(bad.stderr, /url: only http and https URLs can be fetched, not ftp/)
    const strict = await startTestServer()
    try {
      const refused = await plaza(['util', 'media', `${site.url}/video`, '--url', strict.url])
      assert.is(refused.code, 1)
      assert.match(refused.stderr, /127\.0\.0\.1 is a private or loopback address/)
    } finally {
      await strict.close()
    }
  } finally {
    await server.close()
  }
  const local = await plaza(['util', 'media', 'not a url'])
  assert.is(local.code, 2)
  assert.match(local.stderr, /url: not a valid URL/)
})

test.run()
