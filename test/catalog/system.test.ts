/** `GET /api/uptime`, `GET /api/website` (and `PLAZA_WEBSITE_URL`) and the `/` redirect, through the real server. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ConfigError, loadConfig } from '../../src/server/config.js'
import { uptimeAnswer } from '../../src/shared/schemas/catalog.js'
import { manualClock, startTestServer } from '../helpers/server.js'

/** A request that does not follow redirects, so the 302 itself is what is checked. */
async function exchange(url: string, method = 'GET') {
  const response = await fetch(url, { method, redirect: 'manual' })
  const text = await response.text()
  return { status: response.status, location: response.headers.get('location'), headers: response.headers, text, body: text ? JSON.parse(text) : null }
}

test('uptime: the start time from the injected clock, and the seconds since, advancing with it', async () => {
  const time = manualClock(new Date('2026-03-04T05:06:07.890Z'))
  const server = await startTestServer({ clock: time.clock })
  try {
    const first = await exchange(`${server.url}/api/uptime`)
    assert.is(first.status, 200)
    assert.equal(first.body, { message: 'Up for 0 s', started_at: '2026-03-04 05:06:07', uptime_seconds: 0, now: '2026-03-04 05:06:07' })
    time.advance(86_400_000 + 3_600_000 + 60_000 + 1_500)
    const later = await exchange(`${server.url}/api/uptime?ignored=1`)
    assert.equal(later.body, { message: 'Up for 1 d 1 h 1 min 1 s', started_at: '2026-03-04 05:06:07', uptime_seconds: 90_061, now: '2026-03-05 06:07:09' })
    assert.equal(uptimeAnswer.parse(later.body), later.body)
    time.advance(-200_000_000)
    assert.is((await exchange(`${server.url}/api/uptime`)).body.uptime_seconds, 0, 'a clock set back is not a negative uptime')
  } finally {
    await server.close()
  }
})

test('website: a 302 to /docs by default, to PLAZA_WEBSITE_URL when set', async () => {
  const plain = await startTestServer({ env: {} })
  try {
    const res = await exchange(`${plain.url}/api/website`)
    assert.is(res.status, 302)
    assert.is(res.location, '/docs')
    assert.equal(res.body, { message: 'Found: /docs', location: '/docs' })
  } finally {
    await plain.close()
  }
  for (const website of ['https://plaza.example.com/about?from=api', '/welcome']) {
    const server = await startTestServer({ env: { PLAZA_WEBSITE_URL: ` ${website} ` } })
    try {
      const res = await exchange(`${server.url}/api/website`)
      assert.is(res.status, 302)
      assert.is(res.location, website)
      assert.is(res.body.location, website)
    } finally {
      await server.close()
    }
  }
})

test('PLAZA_WEBSITE_URL is validated at start-up: an http(s) URL or an absolute path', () => {
  // loadConfig only reads: nothing is created in the data directory it names.
  const load = (value: string) => loadConfig({}, { PLAZA_WEBSITE_URL: value })
  assert.is(load('').websiteUrl, '/docs')
  assert.is(load('http://127.0.0.1:3000').websiteUrl, 'http://127.0.0.1:3000')
  assert.is(load('/docs#/system').websiteUrl, '/docs#/system')
  for (const bad of ['docs', 'ftp://example.com', 'javascript:alert(1)', '//evil.example.com', '/a b', 'https://', 'https://exa mple.com', '/\\evil.example.com', '/caf\u00e9', 'mailto:a@b.c']) {
    assert.throws(() => load(bad), (error: Error) => error instanceof ConfigError && /^PLAZA_WEBSITE_URL must be an http\(s\) URL or an absolute path/.test(error.message), bad)
  }
})

test('/ redirects to /docs (GET and HEAD); other methods are 405', async () => {
  const server = await startTestServer({ env: { PLAZA_WEBSITE_URL: 'https://plaza.example.com' } })
  try {
    const get = await exchange(`${server.url}/`)
    assert.is(get.status, 302)
    assert.is(get.location, '/docs')
    const head = await exchange(`${server.url}/`, 'HEAD')
    assert.is(head.status, 302)
    assert.is(head.location, '/docs')
    assert.is(head.text, '')
    const post = await exchange(`${server.url}/`, 'POST')
    assert.is(post.status, 405)
    assert.is(post.headers.get('allow'), 'GET, HEAD')
    assert.is(post.body.status, 'error')
    // Only the root itself: an unknown path stays a 404.
    assert.is((await exchange(`${server.url}/nothing-here`)).status, 404)
  } finally {
    await server.close()
  }
})

test.run()
