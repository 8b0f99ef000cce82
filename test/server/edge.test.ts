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
import { MALFORMED_TARGETS, rawRequest } from '../helpers/raw.js'
import { registerUser, startTestServer } from '../helpers/server.js'

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

test.run()
