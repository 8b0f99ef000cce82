/** The fetch guard against real loopback servers: each refusal, and what it lets through with `allowPrivate`. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ConfigError, loadConfig } from '../../src/server/config.js'
import { guardedFetch, refusalOf } from '../../src/server/fetch-guard.js'

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void

async function serve(handler: Handler) {
  const server = http.createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

async function refused(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise
  } catch (error) {
    return error as { code: string; message: string }
  }
  throw new Error('expected a refusal')
}

test('addresses: public ones pass, every private, loopback, link-local, multicast, CGNAT, ULA and mapped range is refused', () => {
  for (const ok of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '172.32.0.1', '100.128.0.1']) assert.is(refusalOf(ok), null, ok)
  const cases: Array<[string, RegExp]> = [
    ['127.0.0.1', /loopback/], ['127.9.9.9', /loopback/], ['10.1.2.3', /private/], ['172.16.0.1', /private/], ['192.168.1.1', /private/],
    ['169.254.169.254', /link-local/], ['0.0.0.0', /unspecified/], ['100.64.0.1', /carrier-grade NAT/], ['224.0.0.1', /multicast/],
    ['255.255.255.255', /broadcast/], ['::1', /loopback/], ['fd00::1', /private/], ['fe80::1', /link-local/], ['ff02::1', /multicast/],
    ['::ffff:127.0.0.1', /embeds/], ['::ffff:8.8.8.8', /embeds/], ['64:ff9b::7f00:1', /embeds/], ['2002:7f00:1::', /embeds/], ['::', /embeds|reserved/],
  ]
  for (const [address, reason] of cases) assert.match(refusalOf(address) ?? '', reason, address)
  // The test switch opens loopback and private networks only: metadata and multicast stay closed.
  assert.is(refusalOf('127.0.0.1', true), null)
  assert.is(refusalOf('10.0.0.1', true), null)
  assert.match(refusalOf('169.254.169.254', true) ?? '', /link-local/)
})

test('refuses 127.0.0.1, 10.x, 169.254.169.254, [::1] and a name resolving to loopback before connecting', async () => {
  let hits = 0
  const server = await serve((_req, res) => { hits++; res.end('secret') })
  try {
    for (const [url, reason] of [
      [server.url, /127\.0\.0\.1 is a private or loopback address/],
      ['http://10.0.0.8/x.png', /10\.0\.0\.8 is a private/],
      ['http://169.254.169.254/latest/meta-data/', /link-local/],
      [`http://[::1]:${server.port}/`, /::1 is a private or loopback/],
      [`http://localhost:${server.port}/`, /localhost resolves to (127\.0\.0\.1|::1), which is a private or loopback/],
      ['http://2130706433/', /127\.0\.0\.1 is a private/],
    ] as const) {
      const error = await refused(guardedFetch(url, { field: 'imageUrl' }))
      assert.is(error.code, 'BAD_REQUEST', url)
      assert.match(error.message, /^imageUrl: /)
      assert.match(error.message, reason, url)
    }
    assert.is(hits, 0)
  } finally {
    await server.close()
  }
})

test('refuses other schemes, credentials and junk', async () => {
  for (const [url, reason] of [
    ['file:///etc/passwd', /only http and https URLs can be fetched, not file/],
    ['ftp://example.com/a.png', /not ftp/],
    ['gopher://127.0.0.1:6379/_INFO', /not gopher/],
    ['data:image/png;base64,AAAA', /not data/],
    ['http://user:pw@example.com/', /user name or password/],
    ['not a url', /not a valid URL/],
  ]) {
    const error = await refused(guardedFetch(url as string))
    assert.is(error.code, 'BAD_REQUEST')
    assert.match(error.message, reason as RegExp)
  }
})

test('with allowPrivate: fetches bytes and the content type; a host name is pinned to the address that was checked', async () => {
  const server = await serve((req, res) => {
    res.setHeader('content-type', 'image/png')
    res.end(`host=${req.headers.host}`)
  })
  try {
    const direct = await guardedFetch(`${server.url}/a.png`, { allowPrivate: true })
    assert.is(direct.bytes.toString(), `host=127.0.0.1:${server.port}`)
    assert.is(direct.contentType, 'image/png')
    // The name resolves to the checked loopback address; the Host header still names the host.
    const resolved: string[] = []
    const named = await guardedFetch(`http://images.test:${server.port}/a.png`, {
      allowPrivate: true,
      resolve: async (host) => (resolved.push(host), ['127.0.0.1']),
    })
    assert.equal(resolved, ['images.test'])
    assert.is(named.bytes.toString(), `host=images.test:${server.port}`)
  } finally {
    await server.close()
  }
})

test('a redirect is checked like the first request: to a private address it is refused, and at most 5 are followed', async () => {
  const server = await serve((req, res) => {
    const n = Number(req.url!.slice(1)) || 0
    if (req.url === '/to-metadata') return void res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end()
    if (req.url === '/to-mapped') return void res.writeHead(307, { location: 'http://[::ffff:127.0.0.1]/' }).end()
    if (req.url === '/to-named') return void res.writeHead(301, { location: 'http://inside.test/secret' }).end()
    res.writeHead(302, { location: `/${n + 1}` }).end()
  })
  try {
    const metadata = await refused(guardedFetch(`${server.url}/to-metadata`, { allowPrivate: true }))
    assert.match(metadata.message, /169\.254\.169\.254 is a link-local address/)
    const mapped = await refused(guardedFetch(`${server.url}/to-mapped`, { allowPrivate: true }))
    assert.match(mapped.message, /::ffff:7f00:1 is an IPv6 address that embeds another address/)
    // The redirect's host name is resolved and checked too (the test switch never opens link-local).
    const named = await refused(guardedFetch(`${server.url}/to-named`, { allowPrivate: true, resolve: async () => ['169.254.10.10'] }))
    assert.match(named.message, /inside\.test resolves to 169\.254\.10\.10, which is a link-local address/)
    const loop = await refused(guardedFetch(`${server.url}/0`, { allowPrivate: true }))
    assert.is(loop.code, 'UNPROCESSABLE_CONTENT')
    assert.match(loop.message, /more than 5 redirects/)
  } finally {
    await server.close()
  }
})

test('too big: refused by Content-Length, or cut while streaming when the length is not declared', async () => {
  const server = await serve((req, res) => {
    if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': String(11 * 1024 * 1024) })
      res.write(Buffer.alloc(1024))
      return
    }
    // Chunked, without a length: the guard counts and cuts.
    res.writeHead(200)
    const chunk = Buffer.alloc(64 * 1024)
    let sent = 0
    const pump = () => {
      while (sent < 64 * 1024 * 1024 && res.write(chunk)) sent += chunk.length
      if (sent < 64 * 1024 * 1024) res.once('drain', pump)
    }
    res.on('close', () => res.removeAllListeners('drain'))
    pump()
  })
  try {
    const declared = await refused(guardedFetch(`${server.url}/declared`, { allowPrivate: true }))
    assert.is(declared.code, 'PAYLOAD_TOO_LARGE')
    assert.match(declared.message, /larger than 10 MiB/)
    const streamed = await refused(guardedFetch(`${server.url}/chunked`, { allowPrivate: true, maxBytes: 1024 * 1024 }))
    assert.is(streamed.code, 'PAYLOAD_TOO_LARGE')
  } finally {
    await server.close()
  }
})

test('too slow: the whole exchange is cut at the time limit', async () => {
  const server = await serve((_req, res) => {
    res.writeHead(200)
    res.write('a')
    // Never ends.
  })
  try {
    const started = Date.now()
    const slow = await refused(guardedFetch(server.url, { allowPrivate: true, timeoutMs: 300 }))
    assert.is(slow.code, 'GATEWAY_TIMEOUT')
    assert.match(slow.message, /within 0\.3 s/)
    assert.ok(Date.now() - started < 3000)
  } finally {
    await server.close()
  }
  // A resolver that never answers is cut by the same limit.
  const stuck = await refused(guardedFetch('http://slow-dns.test/', { timeoutMs: 200, resolve: () => new Promise(() => {}) }))
  assert.is(stuck.code, 'GATEWAY_TIMEOUT')
})

test('remote errors are 422: an HTTP error status, a closed port', async () => {
  const server = await serve((_req, res) => void res.writeHead(404).end('no'))
  try {
    const missing = await refused(guardedFetch(`${server.url}/nothing.png`, { allowPrivate: true }))
    assert.is(missing.code, 'UNPROCESSABLE_CONTENT')
    assert.match(missing.message, /answered HTTP 404/)
  } finally {
    await server.close()
  }
  const closed = await refused(guardedFetch(`${server.url}/`, { allowPrivate: true }))
  assert.is(closed.code, 'UNPROCESSABLE_CONTENT')
  assert.match(closed.message, /could not be fetched \(ECONNREFUSED\)/)
})

test('PLAZA_FETCH_ALLOW_PRIVATE: off by default, 1/true or 0/false, anything else stops the start-up', () => {
  assert.is(loadConfig({}, {}).fetchAllowPrivate, false)
  assert.is(loadConfig({}, { PLAZA_FETCH_ALLOW_PRIVATE: '1' }).fetchAllowPrivate, true)
  assert.is(loadConfig({}, { PLAZA_FETCH_ALLOW_PRIVATE: 'false' }).fetchAllowPrivate, false)
  assert.throws(() => loadConfig({}, { PLAZA_FETCH_ALLOW_PRIVATE: 'yes please' }), (error: unknown) => error instanceof ConfigError && /must be 1 or 0/.test((error as Error).message))
})

test.run()
