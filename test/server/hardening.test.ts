/**
 * Regression tests for what an attacker's probe found (issue 11): oversized tRPC bodies, malformed
 * escapes, unknown methods, stalled bodies, malformed HTTP; plus the access log, log levels, CORS
 * and the process guard.
 */
import { spawn } from 'node:child_process'
import http from 'node:http'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createLogger, type Logger } from '../../src/server/logger.js'
import { rawRequest } from '../helpers/raw.js'
import { registerUser, startTestServer } from '../helpers/server.js'

/** A logger that keeps every event, for asserting on what was (and was not) logged. */
function recordingLogger() {
  const lines: Array<Record<string, any>> = []
  const logger: Logger = createLogger('debug', (line) => lines.push(JSON.parse(line)))
  return { logger, lines }
}

const isEnvelope = (body: any) => body && body.status === 'error' && body.data === null && typeof body.message === 'string' && Number.isInteger(body.timestamp)

test('a 300 MB body declared to /trpc is refused with 413 before it is read', async () => {
  const server = await startTestServer()
  const res = await rawRequest(
    server.url,
    `POST /trpc/auth.login HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${300 * 1024 * 1024}\r\n\r\n{"email":`,
    { stall: true },
  )
  assert.is(res.status, 413)
  assert.ok(isEnvelope(res.json), res.body)
  assert.is(res.headers.connection, 'close')
  assert.is((await server.request('GET', '/health')).status, 200)
  await server.close()
})

test('a chunked /trpc body is cut at 1 MiB: 413, and the rest is never buffered', async () => {
  const server = await startTestServer()
  const { hostname, port } = new URL(server.url)
  const result = await new Promise<{ status: number; sent: number }>((resolve, reject) => {
    const req = http.request({ hostname, port, method: 'POST', path: '/trpc/auth.login', headers: { 'content-type': 'application/json' } })
    let sent = 0
    const chunk = Buffer.alloc(64 * 1024, 'a')
    req.on('response', (res) => {
      res.resume()
      resolve({ status: res.statusCode!, sent })
      req.destroy()
    })
    req.on('error', reject)
    const pump = () => {
      // 64 MiB at most: the answer must come long before.
      while (sent < 64 * 1024 * 1024) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      req.end()
    }
    req.write('{"email":"')
    pump()
  })
  assert.is(result.status, 413)
  assert.ok(result.sent < 64 * 1024 * 1024, 'the answer came before the whole body was sent')
  assert.is((await server.request('GET', '/health')).status, 200)
  await server.close()
})

test('a malformed % escape in a path is a 400 in the envelope, logged without a stack', async () => {
  const { logger, lines } = recordingLogger()
  const server = await startTestServer({ logger })
  const user = await registerUser(server)
  for (const path of ['/api/mobile/user/followers/%E0', '/api/mobile/posts/detail/%', '/trpc/users.profile%E0', '/uploads/posts/%E0%A4%A.jpg', '/api/%ZZ']) {
    const res = await server.request('GET', path, { token: user.token })
    assert.is(res.status, 400, path)
    assert.ok(isEnvelope(res.body), path)
    assert.match(res.body.message, /malformed % escape/)
  }
  assert.equal(lines.filter((line) => line.level === 'error'), [])
  await server.close()
})

test('TRACE and other unknown methods are 405 everywhere, /trpc included', async () => {
  const server = await startTestServer()
  for (const [method, path] of [
    ['TRACE', '/trpc/auth.login'],
    ['TRACE', '/api/mobile/auth/login'],
    ['PROPFIND', '/api/mobile/posts/feed'],
    ['PUT', '/trpc/auth.login'],
    ['DELETE', '/trpc/users.profile'],
    ['TRACE', '/health'],
  ]) {
    const res = await rawRequest(server.url, `${method} ${path} HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n`)
    assert.is(res.status, 405, `${method} ${path}`)
    assert.ok(isEnvelope(res.json), `${method} ${path}: ${res.body}`)
  }
  await server.close()
})

test('a stalled body is cut with 408 after PLAZA_REQUEST_TIMEOUT_MS, and the server keeps serving', async () => {
  const { logger, lines } = recordingLogger()
  const server = await startTestServer({ logger, env: { PLAZA_REQUEST_TIMEOUT_MS: '300' } })
  for (const path of ['/api/mobile/auth/login', '/trpc/auth.login', '/api/codeimage', '/api/v1/chat/completions']) {
    const res = await rawRequest(server.url, `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"email"`, { stall: true })
    assert.is(res.status, 408, path)
    assert.ok(isEnvelope(res.json), res.body)
    assert.is(res.headers.connection, 'close')
  }
  assert.is((await server.request('GET', '/health')).status, 200)
  assert.equal(lines.filter((line) => line.level === 'error'), [], 'a timeout is not an error')
  await server.close()
})

test('malformed HTTP is answered 400 (431 for huge headers) in the envelope, without a body to HEAD, and the connection closed', async () => {
  const server = await startTestServer()
  const res = await rawRequest(server.url, 'GET /health HTTP/1.1\r\nhost: x\r\nbad header line\r\n\r\n')
  assert.is(res.status, 400)
  assert.ok(isEnvelope(res.json), res.body)
  const huge = await rawRequest(server.url, `GET /health HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`)
  assert.is(huge.status, 431)
  assert.ok(isEnvelope(huge.json))
  // HEAD gets the same answer without its body: a client reads nothing after the headers of a HEAD answer.
  const hugeHead = await rawRequest(server.url, `HEAD /health HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`)
  assert.is(hugeHead.status, 431)
  assert.is(hugeHead.body, '')
  assert.is((await server.request('GET', '/health')).status, 200)
  await server.close()
})

test('the access log has one line per request: method, route template, status, bytes, duration, id; never the token or query', async () => {
  const { logger, lines } = recordingLogger()
  const server = await startTestServer({ logger })
  const user = await registerUser(server)
  lines.length = 0
  const res = await server.request('GET', `/api/mobile/posts/detail/999?secret=hunter2`, { token: user.token, headers: { 'x-request-id': 'req-42' } })
  assert.is(res.status, 404)
  assert.is(res.headers.get('x-request-id'), 'req-42')
  await server.request('GET', '/trpc/users.profile?input=%7B%7D', { token: user.token })
  const fresh = await server.request('GET', '/health')
  const requests = lines.filter((line) => line.message === 'request')
  assert.is(requests.length, 3)
  assert.equal(
    { ...requests[0], time: undefined, ms: undefined },
    { time: undefined, level: 'info', message: 'request', id: 'req-42', method: 'GET', route: '/api/mobile/posts/detail/:post_id', status: 404, bytes: requests[0].bytes, ms: undefined },
  )
  assert.ok(requests[0].bytes > 100 && typeof requests[0].ms === 'number')
  assert.is(requests[1].route, '/trpc/users.profile')
  assert.is(requests[2].id, fresh.headers.get('x-request-id'))
  assert.match(requests[2].id, /^[A-Za-z0-9_-]{12}$/)
  const text = JSON.stringify(lines)
  assert.not.match(text, user.token)
  assert.not.match(text, 'hunter2')
  await server.close()
})

test('a client that disconnects mid-request is one info line, not a stack', async () => {
  const { logger, lines } = recordingLogger()
  const server = await startTestServer({ logger })
  const { hostname, port } = new URL(server.url)
  const req = http.request({ hostname, port, method: 'POST', path: '/api/mobile/auth/login', headers: { 'content-type': 'application/json', 'content-length': '1000' } })
  req.on('error', () => {})
  req.write('{"email":')
  // Once another request has made the round trip, the server has the first one's head and partial body.
  await server.request('GET', '/health')
  req.destroy()
  // The server sees the close on its next turns; /health after it proves it kept serving and lets the line land.
  for (let i = 0; i < 20 && !lines.some((line) => line.message === 'client closed the connection'); i++) await server.request('GET', '/health')
  const gone = lines.filter((line) => line.message === 'client closed the connection')
  assert.is(gone.length, 1)
  assert.is(gone[0].level, 'info')
  assert.is(gone[0].status, 499)
  assert.equal(lines.filter((line) => line.level === 'error'), [])
  await server.close()
})

test('PLAZA_LOG_LEVEL: warn drops info lines (the access log), error keeps only errors', () => {
  for (const [level, expected] of [
    ['debug', ['error', 'warn', 'info', 'debug']],
    ['info', ['error', 'warn', 'info']],
    ['warn', ['error', 'warn']],
    ['error', ['error']],
  ] as const) {
    const seen: string[] = []
    const logger = createLogger(level, (line) => seen.push(JSON.parse(line).level))
    logger.debug('d')
    logger.info('i')
    logger.warn('w')
    logger.error('e')
    assert.equal(seen.sort(), [...expected].sort(), level)
  }
})

test('CORS is off unless PLAZA_CORS_ORIGINS is set; then preflights get 204 and allowed origins their header', async () => {
  const off = await startTestServer()
  const preflight = { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' }
  const offAnswer = await off.request('OPTIONS', '/api/mobile/auth/login', { headers: preflight })
  assert.is(offAnswer.status, 405)
  assert.is(offAnswer.headers.get('access-control-allow-origin'), null)
  await off.close()

  const on = await startTestServer({ env: { PLAZA_CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' } })
  const ok = await on.request('OPTIONS', '/api/mobile/auth/login', { headers: preflight })
  assert.is(ok.status, 204)
  assert.is(ok.headers.get('access-control-allow-origin'), 'https://app.example.com')
  assert.match(ok.headers.get('access-control-allow-methods')!, /POST/)
  assert.match(ok.headers.get('access-control-allow-headers')!, /authorization/)
  assert.match(ok.headers.get('vary')!, /Origin/)
  const simple = await on.request('GET', '/health', { headers: { origin: 'https://admin.example.com' } })
  assert.is(simple.headers.get('access-control-allow-origin'), 'https://admin.example.com')
  assert.match(simple.headers.get('access-control-expose-headers')!, /retry-after/)
  const stranger = await on.request('OPTIONS', '/api/mobile/auth/login', { headers: { ...preflight, origin: 'https://evil.example' } })
  assert.is(stranger.headers.get('access-control-allow-origin'), null)
  assert.is((await on.request('GET', '/health', { headers: { origin: 'https://evil.example' } })).headers.get('access-control-allow-origin'), null)
  await on.close()

  const any = await startTestServer({ env: { PLAZA_CORS_ORIGINS: '*' } })
  assert.is((await any.request('OPTIONS', '/trpc/auth.login', { headers: { ...preflight, origin: 'https://anyone.example' } })).headers.get('access-control-allow-origin'), '*')
  await any.close()
})

test('the process guard logs an escaped error with its stack and the process keeps running', async () => {
  const script = `
    import { guardProcess } from './src/server/index.ts'
    guardProcess({ error: (message, detail) => console.log(JSON.stringify({ message, ...detail })) })
    setTimeout(() => { throw new Error('escaped from a stream') })
    setTimeout(() => { Promise.reject(new Error('nobody awaited me')) }, 10)
    setTimeout(() => console.log('still alive'), 50)
  `
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (chunk) => (out += chunk))
  const code = await new Promise((resolve) => child.on('close', resolve))
  assert.is(code, 0)
  const [first, second, last] = out.trim().split('\n')
  assert.match(JSON.parse(first).message, /uncaught exception: the server keeps serving/)
  assert.match(JSON.parse(first).error, /escaped from a stream\n\s+at /)
  assert.match(JSON.parse(second).message, /unhandled rejection/)
  assert.is(last, 'still alive')
})

test.run()
