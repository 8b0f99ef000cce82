/**
 * The HTTP edge under attack (issue 44): chunked bodies past their limit, malformed request lines
 * and absolute-form URLs, silent connections, idle keep-alive connections and one address holding
 * every connection. Each test reproduced its finding before the fix.
 */
import http from 'node:http'
import net from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createLogger, type Logger } from '../../src/server/logger.js'
import { guardProcess } from '../../src/server/index.js'
import { MALFORMED_TARGETS, parseRawResponse, rawRequest } from '../helpers/raw.js'
import { startServe } from '../helpers/cli.js'
import { parsePrometheusText, sampleValue } from '../helpers/prometheus.js'
import { registerUser, startTestServer, tempDir } from '../helpers/server.js'

/** A logger that keeps every event, and catches what escapes a handler the way `plaza serve` does (guardProcess). */
function recordingLogger() {
  const lines: Array<Record<string, any>> = []
  const logger: Logger = createLogger('debug', (line) => lines.push(JSON.parse(line)))
  return { logger, lines, errors: () => lines.filter((line) => line.level === 'error') }
}

const isEnvelope = (body: any) => body && body.status === 'error' && body.data === null && typeof body.message === 'string' && Number.isInteger(body.timestamp)

interface ChunkedAnswer {
  status: number
  headers: http.IncomingHttpHeaders
  body: any
  /** Bytes the client had handed to its socket when the answer came. */
  sent: number
}

/**
 * POSTs up to `total` bytes with Transfer-Encoding: chunked (no Content-Length), 64 KiB at a time,
 * and resolves with the answer as soon as it comes (the rest is not sent).
 */
function postChunked(url: string, path: string, total: number, headers: Record<string, string> = {}): Promise<ChunkedAnswer> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, method: 'POST', path, headers: { 'content-type': 'application/json', ...headers } })
    let sent = 0
    let answered = false
    const chunk = Buffer.alloc(64 * 1024, 'a')
    req.on('response', (res) => {
      answered = true
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (part) => (text += part))
      res.on('end', () => {
        let body: any = text
        try {
          body = JSON.parse(text)
        } catch {}
        resolve({ status: res.statusCode!, headers: res.headers, body, sent })
        req.destroy()
      })
    })
    // Writing on after the server has answered and closed is the client's problem, not the test's.
    req.on('error', (error) => (answered ? undefined : reject(error)))
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      if (!answered) req.end()
    }
    req.write('{"email":"')
    pump()
  })
}

const MiB = 1024 * 1024

test('finding 4: a chunked body past its limit is a 413 in the envelope at once, nothing logged, on every JSON reader', async () => {
  const { logger, errors } = recordingLogger()
  const unguard = guardProcess(logger)
  const server = await startTestServer({ logger })
  const user = await registerUser(server)
  const auth = { authorization: `Bearer ${user.token}` }
  try {
    for (const [path, total, headers] of [
      ['/api/mobile/auth/login', 2 * MiB, {}],
      ['/api/mobile/posts/create', 2 * MiB, auth],
      ['/api/codeimage', 2 * MiB, {}],
      ['/api/carbon', 2 * MiB, {}],
      ['/api/execute', 2 * MiB, {}],
    ] as const) {
      const res = await postChunked(server.url, path, total, headers)
      assert.is(res.status, 413, path)
      assert.ok(isEnvelope(res.body), `${path}: ${JSON.stringify(res.body)}`)
      assert.match(res.body.message, /larger than \d+ bytes/, path)
      assert.is(res.headers.connection, 'close', path)
    }
    // The chat routes answer in OpenAI's error shape on /api/v1; their limit is 4 MiB.
    const chat = await postChunked(server.url, '/api/v1/chat/completions', 6 * MiB)
    assert.is(chat.status, 413)
    assert.is(chat.body.error.code, 'request_too_large')
    // tRPC answers in its own shape.
    const trpc = await postChunked(server.url, '/trpc/auth.login', 2 * MiB)
    assert.is(trpc.status, 413)
    assert.is((await server.request('GET', '/health')).status, 200)
    assert.equal(errors(), [], 'no uncaught exception, no unhandled rejection, no failed request')
  } finally {
    await server.close()
    unguard()
  }
})

test('a chunked body within its limit is read whole', async () => {
  const server = await startTestServer()
  const { hostname, port } = new URL(server.url)
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request({ hostname, port, method: 'POST', path: '/api/mobile/auth/login', headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume()
      resolve(res.statusCode!)
    })
    req.on('error', reject)
    req.write('{"email":"nobody@example.com",')
    req.end('"password":"not the one"}')
  })
  assert.is(status, 401)
  await server.close()
})

test('finding 5: malformed request targets and absolute-form URLs are a 400 in the envelope, no stack logged', async () => {
  const { logger, errors } = recordingLogger()
  const server = await startTestServer({ logger })
  for (const line of MALFORMED_TARGETS) {
    const res = await rawRequest(server.url, `${line}\r\nhost: x\r\ncontent-length: 0\r\n\r\n`)
    assert.is(res.status, 400, line)
    assert.ok(isEnvelope(res.json), `${line}: ${res.body}`)
  }
  assert.equal(errors(), [])
  await server.close()
})

test('a well-formed absolute-form target is served as its path and query; `//x` is a path, not a host', async () => {
  const server = await startTestServer()
  const user = await registerUser(server)
  const health = await rawRequest(server.url, 'GET http://plaza.example/health HTTP/1.1\r\nhost: x\r\n\r\n')
  assert.is(health.status, 200)
  assert.is(health.json.data.status, 'ok')
  const profile = await rawRequest(server.url, `GET http://plaza.example:8080/api/mobile/user/profile/${user.username}?x=1 HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${user.token}\r\n\r\n`)
  assert.is(profile.status, 200)
  assert.is(profile.json.data.username, user.username)
  const trpc = await rawRequest(server.url, `GET https://plaza.example/trpc/users.profile?input=${encodeURIComponent(JSON.stringify({ user_id: user.username }))} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${user.token}\r\n\r\n`)
  assert.is(trpc.status, 200)
  // Resolved against a base URL, `//health` would have named the host "health" and served the root.
  const doubled = await rawRequest(server.url, 'GET //health HTTP/1.1\r\nhost: x\r\n\r\n')
  assert.is(doubled.status, 404)
  const star = await rawRequest(server.url, 'OPTIONS * HTTP/1.1\r\nhost: x\r\n\r\n')
  assert.is(star.status, 204)
  assert.match(star.headers.allow, /GET/)
  await server.close()
})

/** A TCP connection that sends `data` (nothing by default); resolves once the server has it. */
function openSocket(url: string, { data, localAddress }: { data?: string; localAddress?: string } = {}): Promise<net.Socket> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress })
    socket.on('error', () => {})
    socket.once('connect', () => {
      if (data) socket.write(data)
      resolve(socket)
    })
    socket.once('error', reject)
  })
}

/** Resolves with what the server wrote before it closed (or ended) `socket`. */
function closedBy(socket: net.Socket): Promise<string> {
  let received = ''
  socket.on('data', (chunk) => (received += chunk.toString('latin1')))
  return new Promise((resolve) => {
    if (socket.destroyed || socket.readableEnded) return resolve(received)
    socket.once('end', () => resolve(received))
    socket.once('close', () => resolve(received))
  })
}

/** GET `path` from `localAddress` (a loopback address other than 127.0.0.1 is another client). */
function getFrom(url: string, path: string, localAddress: string): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url + path, { localAddress, agent: false }, (res) => {
      let text = ''
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers }))
    })
    req.on('error', reject)
  })
}

/** Resolves with what the server wrote to each of the first `count` of `sockets` it closes. */
function firstClosed(sockets: net.Socket[], count: number): Promise<string[]> {
  return new Promise((resolve) => {
    const answers: string[] = []
    for (const socket of sockets) {
      void closedBy(socket).then((received) => {
        answers.push(received)
        if (answers.length === count) resolve(answers)
      })
    }
  })
}

/** Resolves once the in-process server has accepted `count` more connections. */
function accepted(server: http.Server, count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0
    const onConnection = () => {
      if (++seen < count) return
      server.off('connection', onConnection)
      resolve()
    }
    server.on('connection', onConnection)
  })
}

/** Resolves once each of the server's sides of the next `count` connections it accepts has closed. */
function serverClosesNext(server: http.Server, count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0
    let closed = 0
    const onConnection = (socket: net.Socket) => {
      if (++seen === count) server.off('connection', onConnection)
      socket.once('close', () => ++closed === count && resolve())
    }
    server.on('connection', onConnection)
  })
}

/** A peer that connects, sends `data` (nothing by default), and then neither reads nor closes: what the attack held open. */
function openStubborn(url: string, data?: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), allowHalfOpen: true })
    socket.once('connect', () => {
      if (data) socket.write(data)
      resolve(socket)
    })
    socket.once('error', reject)
  })
}

test('finding 2: connections that send no byte, or not a whole request head, and never read are closed by the server after PLAZA_HEADERS_TIMEOUT_MS', async () => {
  const server = await startTestServer({ env: { PLAZA_HEADERS_TIMEOUT_MS: '300' } })
  const closed = serverClosesNext(server.app.server, 21)
  const peers = await Promise.all([...Array.from({ length: 20 }, () => openStubborn(server.url)), openStubborn(server.url, 'GET /health HTTP/1.1\r\nhost: x\r\n')])
  await closed
  // What each peer finds once it reads: a 408 in the envelope, then the end.
  for (const answer of (await Promise.all(peers.map(closedBy))).map(parseRawResponse)) {
    assert.is(answer.status, 408)
    assert.ok(isEnvelope(answer.json))
  }
  assert.is((await server.request('GET', '/health')).status, 200)
  await server.close()
})

test('an idle keep-alive connection is closed after PLAZA_KEEPALIVE_TIMEOUT_MS; one that asked in time was served', async () => {
  const server = await startTestServer({ env: { PLAZA_KEEPALIVE_TIMEOUT_MS: '200', PLAZA_HEADERS_TIMEOUT_MS: '60000' } })
  // The setting reaches node's timer (until issue 44 it was a fixed 5 s no one could change).
  assert.is(server.app.server.keepAliveTimeout, 200)
  const socket = await openSocket(server.url, { data: 'GET /health HTTP/1.1\r\nhost: x\r\n\r\n' })
  // Closed by the server although the peer neither closes nor times out its head (60 s away): the idle timeout did it.
  const received = await closedBy(socket)
  const answer = parseRawResponse(received)
  assert.is(answer.status, 200)
  await server.close()
})

test('finding 2: one address cannot hold every connection; others keep being served, the address hears 429 past its cap', async () => {
  const server = await startTestServer({ env: { PLAZA_MAX_CONNECTIONS: '20', PLAZA_MAX_CONNECTIONS_PER_ADDRESS: '5' } })
  const all = accepted(server.app.server, 20)
  const hogs = await Promise.all(Array.from({ length: 20 }, () => openSocket(server.url, { localAddress: '127.0.0.1' })))
  await all
  // The 15 past the cap are answered and closed at once; 5 stay open.
  const refused = (await firstClosed(hogs, 15)).map(parseRawResponse)
  assert.equal(refused.map((answer) => answer.status), Array(15).fill(429))
  assert.ok(isEnvelope(refused[0].json))
  assert.match(refused[0].json.message, /too many open connections/i)
  assert.is((await getFrom(server.url, '/health', '127.0.0.2')).status, 200, 'another address is served')
  const over = await getFrom(server.url, '/health', '127.0.0.1')
  assert.is(over.status, 429, 'the address holding 5 is refused a 6th')
  assert.ok(isEnvelope(over.body))
  for (const socket of hogs) socket.destroy()
  await server.close()
})

test('a proxy named in PLAZA_TRUST_PROXY is not capped: every client arrives through it', async () => {
  const server = await startTestServer({ env: { PLAZA_MAX_CONNECTIONS_PER_ADDRESS: '2', PLAZA_TRUST_PROXY: '127.0.0.3' } })
  const all = accepted(server.app.server, 4)
  const proxied = await Promise.all(Array.from({ length: 4 }, () => openSocket(server.url, { localAddress: '127.0.0.3' })))
  await all
  assert.is((await getFrom(server.url, '/health', '127.0.0.3')).status, 200)
  assert.ok(proxied.every((socket) => !socket.destroyed))
  // Another peer is capped as ever.
  const others = await Promise.all(Array.from({ length: 3 }, () => openSocket(server.url, { localAddress: '127.0.0.4' })))
  const [refused] = await firstClosed(others, 1)
  assert.is(parseRawResponse(refused).status, 429)
  for (const socket of [...proxied, ...others]) socket.destroy()
  await server.close()
})

/** `plaza_http_connections` summed over the cluster's workers, scraped on a connection of its own (counted in it). */
async function openConnections(url: string): Promise<number> {
  const families = parsePrometheusText(await (await fetch(`${url}/metrics`, { headers: { connection: 'close' } })).text())
  return sampleValue(families, 'plaza_http_connections')!
}

test('finding 2 in cluster mode: every worker of `plaza serve --workers 2` closes silent connections that never read', async () => {
  const { child, url, exited } = await startServe(['--port', '0', '--data-dir', tempDir(), '--workers', '2', '--no-rate-limits'], { PLAZA_HEADERS_TIMEOUT_MS: '300' })
  const peers = await Promise.all(Array.from({ length: 8 }, () => openStubborn(url)))
  // Round-robin hands them to both workers; once every one is closed, only the scrape's own connection is open.
  let open = await openConnections(url)
  for (let i = 0; i < 1000 && open > 1; i++) open = await openConnections(url)
  assert.is(open, 1)
  for (const answer of (await Promise.all(peers.map(closedBy))).map(parseRawResponse)) assert.is(answer.status, 408)
  child.kill('SIGTERM')
  assert.is(await exited, 0)
})

test("node's own request timeout, met before the body timer, is the same 408 in the envelope (not a reset)", async () => {
  const server = await startTestServer({ env: { PLAZA_REQUEST_TIMEOUT_MS: '60000' } })
  const connected = new Promise<net.Socket>((resolve) => server.app.server.once('connection', resolve))
  const arrived = new Promise<void>((resolve) => server.app.server.once('request', () => resolve()))
  const peer = await openSocket(server.url, { data: 'POST /api/mobile/auth/login HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"email"' })
  const [socket] = await Promise.all([connected, arrived])
  // What node's connection checker does when a request outlives requestTimeout (whichever timer fires first on a busy machine).
  server.app.server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket)
  const answer = parseRawResponse(await closedBy(peer))
  assert.is(answer.status, 408)
  assert.ok(isEnvelope(answer.json))
  assert.is(answer.headers.connection, 'close')
  await server.close()
})

test.run()
