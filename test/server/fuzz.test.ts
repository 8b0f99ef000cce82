/**
 * A seeded, bounded fuzz run over every route of the route tables, every tRPC procedure, /uploads
 * and /health: random methods, path parameters (malformed escapes, traversal, huge numbers),
 * queries, JSON and non-JSON bodies, multipart forms (truncated ones too), tokens, chunked bodies
 * past every limit, and malformed request lines and absolute-form URLs over a raw socket. No answer
 * may be a 5xx or leave the envelope (tRPC's own error shape on /trpc, OpenAI's on /api/v1), every
 * answer to an operation of the OpenAPI document must be one it declares (status, media type, JSON
 * body matching the schema: test/helpers/openapi-validator.ts), and the server must still be
 * serving afterwards. `PLAZA_FUZZ_SEED` and `PLAZA_FUZZ_REQUESTS` replay or
 * extend a run.
 */
import http from 'node:http'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { appRouter } from '../../src/server/router.js'
import type { Route } from '../../src/server/rest/adapter.js'
import { mobileRoutes } from '../../src/server/rest/mobile.js'
import { rootRoutes, utilityRoutes } from '../../src/server/rest/utility.js'
import { createOpenApiValidator, type OpenApiValidator } from '../helpers/openapi-validator.js'
import { MALFORMED_TARGETS, rawRequest } from '../helpers/raw.js'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'
import { startStandIns } from '../helpers/stand-ins.js'
import { startSmtpServer } from '../helpers/smtp.js'
import { solidImage } from '../uploads/fixtures.js'

const SEED = Number(process.env.PLAZA_FUZZ_SEED) || 20261123
const REQUESTS = Number(process.env.PLAZA_FUZZ_REQUESTS) || 2500
const CONCURRENCY = 8
const PROTOTYPE_KEYS = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'prototype']

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function prng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]
  return { next, int, pick, chance: (p: number) => next() < p }
}
type Rng = ReturnType<typeof prng>

const FIELD_NAMES = [
  'username', 'email', 'password', 'full_name', 'bio', 'content', 'image', 'is_public', 'media_url', 'media_type', 'text_content',
  'background_color', 'privacy_type', 'avatar', 'code', 'language', 'theme', 'padding', 'scale', 'format', 'messages', 'model',
  'stream', 'temperature', 'max_tokens', 'page', 'limit', 'q', 'unread', 'user_id', 'post_id', 'lineNumbers', 'darkMode', 'title',
  'current_password', 'new_password', 'comment_id', 'story_id', 'id', 'is_verified', 'notification_id',
  // Issue 49: private accounts, replies, carousels and stories with alt text, hashtag pages.
  'is_private', 'parent_id', 'media', 'alt', 'path', 'avatar_alt', 'media_alt', 'tag',
  'target_type', 'target_id', 'reason', 'note', 'prompt', 'n', 'size', 'response_format', 'negative_prompt',
  // POST /api/carbon: carbon.now.sh's option names.
  'backgroundColor', 'windowTheme', 'paddingVertical', 'paddingHorizontal', 'dropShadow', 'exportSize', 'fontFamily', 'fontSize', 'lineHeight', 'widthAdjustment', 'width',
  // POST /api/agent
  'maxSteps',
  // POST /api/codeimage past ray.so (issue #19): fonts, background colour and picture, window controls, wrapping.
  'codeSnippet', 'backgroundImage', 'windowControls', 'wrap', 'maxWidth',
  // The gateway's other wire formats (issue #46): Responses, Anthropic Messages, embeddings, moderations, audio.
  'input', 'instructions', 'previous_response_id', 'tools', 'tool_choice', 'max_output_tokens', 'text', 'store', 'metadata', 'role', 'type',
  'system', 'stop_sequences', 'thinking', 'voice', 'encoding_format', 'dimensions', 'call_id', 'output', 'arguments', 'name',
  // Push subscriptions, password reset, email verification and two-factor login (issue 48).
  'subscription', 'endpoint', 'keys', 'p256dh', 'auth', 'data', 'alerts', 'policy', 'token', 'challenge_token', 'recovery_code',
]
const QUERY_KEYS = [
  'page', 'limit', 'q', 'unread', 'type', 'input', 'token', 'batch', 'cursor', 'url', 'imageUrl', 'effect', 'effectIndex', 'ratio', 'scale', 'content', 'prompt', 'maxTokens', 'conversationId', 'system', 'fetch', 'text', 'voice', 'format', 'speed', 'pitch', 'template', 'top', 'bottom', 'username', 'name', 'avatar', 'verified', 'likes', 'replies', 'reposts', 'theme', 'time', 'style', 'color', 'background', 'size', 'model', 'location', 'units', '__proto__', 'constructor',
]

function randomString(rng: Rng): string {
  return rng.pick([
    () => '',
    () => 'a',
    () => 'hello world',
    () => '#coffee @alice',
    () => 'x'.repeat(rng.pick([3, 30, 31, 501, 2201, 70_000])),
    () => '\u0000\u202e\ud83d\ude00\uffff',
    () => '../../etc/passwd',
    () => 'uploads/posts/AAAAAAAAAAAAAAAAAAAAAAAA.jpg',
    () => '<script>alert(1)</script>',
    () => "' OR 1=1 --",
    () => 'candy',
    () => 'const x = 1',
    // POST /api/execute runs these (short programs: the fuzz stays fast); python is left out, as each run starts a process.
    () => 'javascript',
    () => 'console.log(stdin); while (true) {}',
    () => 'user@example.com',
    () => 'correct horse',
    () => String(rng.int(1e6)),
    () => rng.pick(['post', 'comment', 'story', 'user', 'spam', 'self_harm', 'other']),
    // Image inputs: only addresses the fetch guard refuses (the fuzz server does not allow private ones), so no request leaves the machine.
    () => rng.pick(['http://127.0.0.1:9/x.png', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/a.gif', 'http://10.0.0.1/', 'file:///etc/passwd', 'gopher://localhost/']),
    () => rng.pick(['16:9', '1:1', '0', '4', '2', 'sepia', 'pixelate', '31']),
    // Speech inputs (/api/tts/flite, /api/tts/espeak): voices of both engines, formats, speeds and pitches in and out of range.
    () => rng.pick(['kal', 'slt', 'fr', 'en-us', 'gmw/en-US', 'mp3', 'wav', 'ogg', '175', '79', '451', '99', '-1', '<speak>&amp;</speak>']),
    // carbon's value formats.
    () => rng.pick(['seti', 'solarized dark', 'bw', 'sharp', '56px', '-5px', '2x', '4x', '133%', 'rgba(171, 184, 195, 1)', 'transparent', 'Hack', 'Fira Code']),
    // Image generation and weather: model aliases, sizes, places the fake geocoder knows (or not), units.
    // Code images: bundled fonts, background colours (one, two, gradient syntax, bad), pictures (an uploads/ path, a URL, a traversal).
    () => rng.pick(['fira-code', 'Cascadia Code', 'ibm-plex-mono', '#123456', '#f0a', '#ff0000,#0000ff', 'linear-gradient(#000, #fff)', '#12345g', 'uploads/codeimages/AAAAAAAAAAAAAAAAAAAAAAAA.png', '/uploads/../../etc/passwd', 'console.log(42)', '한국어 العربية']),
    () => rng.pick(['dalle-3', 'sdxl', 'dall-e-2', 'midjourney', '96x64', '4096x10', 'auto', 'b64_json', 'url', 'Berlin', 'Atlantis', '52.5,13.4', '91,0', 'imperial', 'metric']),
    // Speech providers (/api/tts/openai, elevenlabs, polly, azure): their voices, formats, models and speeds.
    () => rng.pick(['alloy', 'af_bella+af_sky', 'JBFqnCBsd6RMkjVDRZzb', 'Joanna', 'en-US-AvaMultilingualNeural', 'en-US-Ava"><x', 'flac', 'opus', 'aac', 'tts-1', '0.25', '4.5', '1.0']),
    // Object.prototype's names, which a table looked up as a plain object finds (issue #44: color=constructor wedged the render pool).
    () => rng.pick(PROTOTYPE_KEYS),
  ])()
}

function randomValue(rng: Rng, depth = 0): unknown {
  const kinds = depth > 3 ? 6 : 8
  switch (rng.int(kinds)) {
    case 0: return null
    case 1: return rng.chance(0.5)
    case 2: return rng.pick([0, -1, 1, 2, 50, 51, 1e308, -1e308, 3.5, 2 ** 53 + 1, 9e15])
    case 3:
    case 4:
    case 5: return randomString(rng)
    case 6: return Array.from({ length: rng.int(4) }, () => randomValue(rng, depth + 1))
    default: return randomObject(rng, depth + 1)
  }
}

function randomObject(rng: Rng, depth = 0): Record<string, unknown> {
  const object: Record<string, unknown> = {}
  for (let i = rng.int(6); i > 0; i--) object[rng.chance(0.9) ? rng.pick(FIELD_NAMES) : randomString(rng)] = randomValue(rng, depth)
  if (rng.chance(0.3)) object.messages = [{ role: rng.pick(['user', 'system', 'assistant', 'tool', 'x']), content: randomValue(rng, depth + 1) }]
  return object
}

/** A value as a query string's text; an object with a field named `toString` or `valueOf` (the dictionary has them) has no String() of its own. */
function asText(value: unknown): string {
  try {
    return String(value)
  } catch {
    return JSON.stringify(value)
  }
}

function randomParam(rng: Rng, ids: number[]): string {
  return rng.pick([
    () => String(rng.pick(ids)),
    () => String(rng.pick([0, -1, 2 ** 31, 2 ** 63, 1e21])),
    () => 'abc',
    () => '%E0',
    () => '%',
    () => '%2e%2e%2f',
    () => '..',
    () => encodeURIComponent('ünï'),
    () => '1.5',
    () => '1e3',
    () => rng.pick(PROTOTYPE_KEYS),
  ])()
}

interface Target {
  method: string
  path: string
  kind: 'rest' | 'openai' | 'trpc' | 'binary' | 'page'
  multipart?: boolean
}

function targetsOf(prefix: string, routes: Route[]): Target[] {
  return routes.map((route) => ({
    method: route.method,
    path: prefix + route.path,
    kind: /^\/(v1|inference)\//.test(route.path) ? 'openai' : 'rest',
    multipart: route.path.startsWith('/upload/') || ('multipart' in route && route.multipart !== undefined),
  }))
}

/** Every procedure with the method its tRPC link uses: GET for a query, POST for a mutation. */
function procedureTargets(): Target[] {
  const procedures = (appRouter as unknown as { _def: { procedures: Record<string, { _def: { type: string } }> } })._def.procedures
  const named = Object.entries(procedures).map(([name, procedure]) => ({ name, method: procedure._def.type === 'query' ? 'GET' : 'POST' }))
  return [...named, { name: 'codeimage.create', method: 'POST' }, { name: 'nope.nothing', method: 'GET' }].map(({ name, method }) => ({ method, path: `/trpc/${name}`, kind: 'trpc' as const }))
}

async function multipartBody(rng: Rng, png: Buffer): Promise<{ body: Buffer; type: string }> {
  const boundary = `----fuzz${rng.int(1e9)}`
  const field = rng.pick(['file', 'file', 'photo', 'avatar', ''])
  const content = rng.pick([png, Buffer.from(randomString(rng)), Buffer.from([0x00, 0x00, 0x00, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d])])
  const parts = [
    rng.chance(0.3) ? `--${boundary}\r\ncontent-disposition: form-data; name="caption"\r\n\r\n${randomString(rng)}\r\n` : '',
    `--${boundary}\r\ncontent-disposition: form-data; name="${field}"; filename="x.png"\r\ncontent-type: image/png\r\n\r\n`,
  ]
  let body = Buffer.concat([Buffer.from(parts.join('')), content, Buffer.from(`\r\n--${boundary}--\r\n`)])
  // Truncated forms: the part never ends.
  if (rng.chance(0.3)) body = body.subarray(0, rng.int(body.length))
  return { body, type: rng.chance(0.9) ? `multipart/form-data; boundary=${boundary}` : rng.pick(['multipart/form-data', 'text/plain', 'multipart/form-data; boundary=']) }
}

interface Sent {
  method: string
  path: string
  kind: Target['kind']
}

function checkAnswer(sent: Sent, status: number, type: string, text: string): string | null {
  const where = `${sent.method} ${sent.path.slice(0, 120)} -> ${status}`
  if (status >= 500) return `${where}: a 5xx: ${text.slice(0, 300)}`
  if (sent.method === 'HEAD' || status === 204 || status === 304) return null
  // /api/coder answers its plain-text answer on success (as the original does).
  if (/^\/api\/coder(\?|$)/.test(sent.path) && type.startsWith('text/plain') && status < 300) return null
  if (type.startsWith('image/') || type.startsWith('video/') || type.startsWith('audio/') || type.startsWith('text/event-stream')) return status < 300 || status === 206 ? null : `${where}: ${type} on an error`
  // Root catalog pages: the reference page and its files (HTML, CSS, JavaScript), Prometheus metrics (text).
  if (sent.kind === 'page' && /^text\/(html|plain|css|javascript)/.test(type)) return status < 300 ? null : `${where}: ${type} on an error`
  // The pages mailed links open (issue 48) say in HTML, with a 400, that a link no longer works.
  if (/^\/api\/mobile\/auth\/(password\/reset|email\/verify)(\?|$)/.test(sent.path) && sent.method === 'GET' && type.startsWith('text/html')) return status === 200 || status === 400 ? null : `${where}: a page with ${status}`
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    return `${where}: not JSON (${type}): ${text.slice(0, 200)}`
  }
  const envelope = body && typeof body === 'object' && ['data', 'message', 'status', 'timestamp'].every((key) => key in body)
  if (sent.kind === 'trpc') {
    // Refusals made before a procedure is reached (405, a malformed escape, a declared size past the limit) use the envelope.
    if (envelope && status >= 400 && body.status === 'error') return null
    const items = Array.isArray(body) ? body : [body]
    return items.every((item) => item && ('result' in item || (item.error && typeof item.error.message === 'string'))) ? null : `${where}: not a tRPC answer: ${text.slice(0, 200)}`
  }
  if (sent.kind === 'openai' && status >= 400 && body?.error && typeof body.error.message === 'string') return null
  if (sent.kind === 'openai' && status < 300 && ['chat.completion', 'list', 'model', 'response'].includes(body?.object)) return null
  // Anthropic's Messages API answers a Message (errors are `{type: "error", error: {type, message}}`, read above as any `error.message`).
  if (/^\/api\/v1\/messages(\?|$)/.test(sent.path) && status < 300 && body?.type === 'message') return null
  if (/^\/api\/v1\/moderations(\?|$)/.test(sent.path) && status < 300 && Array.isArray(body?.results)) return null
  if (/^\/api\/v1\/audio\/transcriptions(\?|$)/.test(sent.path) && status < 300 && typeof body?.text === 'string') return null
  // OpenAI's images answer has no `object`: `{created, data: [{url} | {b64_json}]}`.
  if (/^\/api\/v1\/images\/generations(\?|$)/.test(sent.path) && status < 300 && typeof body?.created === 'number' && Array.isArray(body?.data)) return null
  // The chat operations and aliases answer the same unwrapped chat.completion on success (docs/chat.md).
  if (/^\/api\/(chaty|reasoning-70b|reasoning-small|copilot|llama-70b|gpt|chat)(\?|$)/.test(sent.path) && status < 300 && body?.object === 'chat.completion') return null
  if (/^\/api\/(codeimage|carbon)/.test(sent.path) && status === 200 && typeof body?.url === 'string') return null
  // The catalog's JSON answers (decisions §6) are `{message, ...fields}`, not the envelope; so are redirects (`/`, `/api/website`).
  if (/^\/api\/(?!mobile\/)/.test(sent.path) && status < 300 && typeof body?.message === 'string' && !('status' in body)) return null
  if (status >= 300 && status < 400 && typeof body?.message === 'string' && typeof body?.location === 'string') return null
  if (/^\/api\/openapi\.json(\?|$)/.test(sent.path) && status === 200 && body?.openapi === '3.1.0') return null
  if (!envelope) return `${where}: not the envelope: ${text.slice(0, 200)}`
  if ((status >= 400) !== (body.status === 'error')) return `${where}: status ${body.status} with HTTP ${status}`
  return null
}

/**
 * A request line no client library sends, over a raw socket: a listed one (MALFORMED_TARGETS), or
 * a target's path under a broken absolute-form URL (a port past 65535, an unclosed IPv6 bracket, a
 * bad escape in the host, a scheme that is not http). Each must be a 400 in the envelope.
 */
async function fireMalformed(server: TestServer, rng: Rng, target: Target): Promise<{ sent: Sent; problem: string | null }> {
  const path = target.path.replace(/:(\w+)\??/g, '1')
  const line = rng.chance(0.3)
    ? rng.pick(MALFORMED_TARGETS)
    : `${target.method} ${rng.pick([`http://a:${rng.pick([65536, 99999, 10 ** 10])}`, 'http://[::1', `http://%${rng.pick(['zz', 'g0', ''])}`, 'http://a b', 'ftp://a', 'http://[fe80::1%25eth0]'])}${path} HTTP/1.1`
  const sent = { method: line.split(' ')[0], path: line.slice(0, 120), kind: 'rest' as const }
  const answer = await rawRequest(server.url, `${line}\r\nhost: x\r\ncontent-length: 0\r\n\r\n`)
  statuses.set(`raw ${answer.status}`, (statuses.get(`raw ${answer.status}`) ?? 0) + 1)
  if (answer.status !== 400) return { sent, problem: `${line}: ${answer.status}, not 400: ${answer.body.slice(0, 200)}` }
  return { sent, problem: checkAnswer(sent, answer.status, answer.headers['content-type'] ?? '', answer.body) }
}

/**
 * A body with no Content-Length (Transfer-Encoding: chunked) past the limit of any JSON reader
 * (1 MiB; 4 MiB for chat), sent 64 KiB at a time until the server answers: it must answer (a 413,
 * or whatever it refused first) rather than wait for the rest, and never with a 5xx.
 */
function sendChunked(url: string, method: string, headers: Record<string, string>, total: number): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      answered = true
      const chunks: Buffer[] = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => {
        resolve({ status: res.statusCode!, type: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') })
        req.destroy()
      })
      res.on('error', reject)
    })
    let answered = false
    let sent = 0
    const chunk = Buffer.alloc(64 * 1024, 'a')
    req.on('error', reject)
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      if (!answered) req.end()
    }
    req.write('{"content":"')
    pump()
  })
}

async function fire(server: TestServer, rng: Rng, targets: Target[], tokens: string[], ids: number[], png: Buffer, contract: OpenApiValidator): Promise<{ sent: Sent; problem: string | null }> {
  const target = rng.pick(targets)
  if (rng.chance(0.03)) return fireMalformed(server, rng, target)
  if (rng.chance(0.02)) {
    // A route that reads a body, by its own method (a 405 would refuse it before any reading).
    const reader = rng.pick(targets.filter((candidate) => candidate.method !== 'GET' && candidate.kind !== 'page'))
    const path = reader.path.replace(/:(\w+)\??/g, () => String(rng.pick(ids)))
    const method = reader.method
    const sent = { method, path, kind: reader.kind }
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${tokens[1]}` }
    try {
      const answer = await sendChunked(server.url + path, method, headers, rng.pick([1.25, 4.25, 6]) * 1024 * 1024)
      statuses.set(`chunked ${answer.status}`, (statuses.get(`chunked ${answer.status}`) ?? 0) + 1)
      const problem = checkAnswer(sent, answer.status, answer.type, answer.text)
      return { sent, problem: problem ?? contract.check({ method, path, status: answer.status, contentType: answer.type, body: answer.text }).problem }
    } catch (error) {
      // A server that answered and closed while the body was still being written: the client sees a reset.
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ECONNRESET' || code === 'EPIPE') return { sent, problem: null }
      return { sent, problem: `chunked ${method} ${path.slice(0, 120)}: ${(error as Error).message}` }
    }
  }
  const method = rng.chance(0.85) ? target.method : rng.pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE'])
  let path = target.path.replace(/:(\w+)\??/g, () => randomParam(rng, ids))
  if (rng.chance(0.4)) {
    const query = Array.from({ length: 1 + rng.int(3) }, () => `${rng.pick(QUERY_KEYS)}=${rng.chance(0.8) ? encodeURIComponent(asText(randomValue(rng, 3))) : '%E0'}`)
    path += '?' + query.join('&')
  }
  const headers: Record<string, string> = {}
  // The users' own tokens never go to logout or refresh, which would end them for the rest of the run.
  const revokes = /auth[./](logout|refresh)/.test(target.path)
  const token = revokes ? rng.pick([undefined, 'not-a-token']) : rng.pick([undefined, tokens[0], tokens[1], tokens[1], 'not-a-token', 'x'.repeat(300), tokens[2], tokens[2]])
  if (token) headers.authorization = `Bearer ${token}`
  if (rng.chance(0.3)) headers.accept = rng.pick(['application/json', 'image/png', '*/*', 'application/json;q=0'])
  let body: Buffer | string | undefined
  if (method !== 'GET' && method !== 'HEAD') {
    if (target.multipart && rng.chance(0.8)) {
      const form = await multipartBody(rng, png)
      body = form.body
      headers['content-type'] = form.type
    } else {
      headers['content-type'] = rng.chance(0.9) ? 'application/json' : rng.pick(['text/plain', 'application/x-www-form-urlencoded', ''])
      body = rng.pick([
        () => JSON.stringify(randomObject(rng)),
        () => JSON.stringify(randomValue(rng)),
        () => JSON.stringify(target.kind === 'trpc' ? { 0: randomObject(rng) } : randomObject(rng)),
        () => '{"broken": ',
        () => '',
        () => Buffer.from([0xff, 0xfe, 0x00, 0x01]),
      ])()
    }
  }
  const sent = { method, path, kind: target.kind }
  try {
    const answer = await send(server.url + path, method, headers, body)
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    const problem = checkAnswer(sent, answer.status, answer.type, answer.text)
    return { sent, problem: problem ?? contract.check({ method, path, status: answer.status, contentType: answer.type, body: answer.text }).problem }
  } catch (error) {
    // The server may close a connection after refusing a body it did not read; a reset is not an answer to check.
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ECONNRESET' || code === 'EPIPE') {
      statuses.set(`${code} ${method} ${target.path}`, (statuses.get(`${code} ${method} ${target.path}`) ?? 0) + 1)
      return { sent, problem: null }
    }
    return { sent, problem: `${method} ${path.slice(0, 120)}: ${(error as Error).message}` }
  }
}

/** node:http rather than fetch: fetch refuses methods such as TRACE, which a fuzzer must send. */
function send(url: string, method: string, headers: Record<string, string>, body?: Buffer | string): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    // An explicit length: without one node:http sends a GET or DELETE body unframed, which is the client's bug, not the server's.
    const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }
    const req = http.request(url, { method, headers: { ...headers, ...length }, agent: keepAlive }, (res) => {
      // An event stream that opened (GET /notifications/stream) never ends: its status and type are the answer.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.destroy()
        return resolve({ status: res.statusCode!, type: String(res.headers['content-type']), text: '' })
      }
      const chunks: Buffer[] = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}
const statuses = new Map<number | string, number>()
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })

test(`fuzz: ${REQUESTS} seeded requests over every route: no 5xx, no answer outside the envelope, server alive`, async () => {
  // The provider-backed operations (chat, images, weather, speech, search) reach loopback servers speaking their protocols.
  const standIns = await startStandIns()
  const smtp = await startSmtpServer()
  // Programs the fuzz sends to /api/execute may spin: a tiny time limit, and a place for each of the fuzz's connections (and in the speech queue).
  // Renders get minutes, not 10 s: on a loaded machine a valid meme took longer, and its 503 is the budget's, not a fault the fuzz looks for.
  const server = await startTestServer({
    env: {
      ...standIns.env,
      PLAZA_EXECUTE_JS_TIMEOUT_MS: '50', PLAZA_EXECUTE_CONCURRENCY: String(CONCURRENCY), PLAZA_SPEECH_QUEUE: String(CONCURRENCY * 4),
      // Mail to a real SMTP server on loopback, and push subscriptions at a loopback push service (the test switch).
      ...smtp.env,
      PLAZA_FETCH_ALLOW_PRIVATE: '1',
    },
  })
  try {
    const alice = await registerUser(server)
    const bob = await registerUser(server)
    await server.request('POST', `/api/mobile/user/follow/${alice.id}`, { token: bob.token })
    const post = await server.request('POST', '/api/mobile/posts/create', { token: alice.token, body: { content: 'fuzz #seed' } })
    const story = await server.request('POST', '/api/mobile/stories/create', { token: alice.token, body: { media_type: 'text', text_content: 'hi' } })
    // The fuzzer may legitimately delete what alice and bob own or revoke their sessions; carol's token is never sent.
    const carol = await registerUser(server)
    const carolPost = await server.request('POST', '/api/mobile/posts/create', { token: carol.token, body: { content: 'untouched' } })
    const ids = [alice.id, bob.id, post.body.data.id, story.body.data?.id ?? 1, 1, 2, 3]
    // The gateway then requires a key: calls with this one reach it (and GET /api/v1/usage answers), others are refused.
    // Premium, so that POST /api/agent runs (against the fake upstream) rather than only refusing.
    const gateway = await (await server.services.gatewayAccess()).createKey({ name: 'fuzz', rpm: 1_000_000, premium: true })
    const png = await solidImage(8, 8, 'png')
    const contract = createOpenApiValidator((await server.request('GET', '/api/openapi.json')).body)

    const targets: Target[] = [
      ...targetsOf('/api/mobile', mobileRoutes),
      ...targetsOf('/api', utilityRoutes),
      ...targetsOf('', rootRoutes).map((target) => ({ ...target, kind: 'page' as const })),
      { method: 'GET', path: '/', kind: 'rest' },
      ...procedureTargets(),
      { method: 'GET', path: '/trpc/users.profile,posts.feed', kind: 'trpc' },
      // POST /reports (also in mobileRoutes) a second time, so the seeded run sends it twice as often.
      { method: 'POST', path: '/api/mobile/reports', kind: 'rest' },
      { method: 'GET', path: '/health', kind: 'rest' },
      // The reference page and one of its files (the table's `/docs/:asset` becomes a random, unknown asset).
      { method: 'GET', path: '/docs', kind: 'page' },
      { method: 'GET', path: '/docs/plaza-docs.js', kind: 'page' },
      { method: 'GET', path: '/uploads/posts/:name', kind: 'rest' },
      { method: 'GET', path: '/api/mobile/notifications/stream?last_event_id=:id', kind: 'rest' },
      { method: 'GET', path: '/nowhere/:x', kind: 'rest' },
      // The pages mailed links open, with a token (never a live one: those are only in mail).
      { method: 'GET', path: '/api/mobile/auth/password/reset?token=:x', kind: 'rest' },
      { method: 'GET', path: '/api/mobile/auth/email/verify?token=:x', kind: 'rest' },
      // GET /api/media on known media URLs, pattern-only (fetch=0 first: any appended query lands inside the url value), so nothing leaves the machine.
      ...['https://youtu.be/dQw4w9WgXcQ', 'https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC', 'https://www.twitch.tv/shroud', 'https://x.com/jack/status/20'].map((url) => ({
        method: 'GET',
        path: `/api/media?fetch=0&url=${encodeURIComponent(url)}`,
        kind: 'rest' as const,
      })),
      // The Maker's cards with their required parameters given, so random values reach the renderers.
      { method: 'GET', path: '/api/meme?template=this-is-fine&top=:top&bottom=:bottom', kind: 'rest' },
      { method: 'GET', path: '/api/fakepost?username=fuzz&text=:text&likes=:likes&theme=dark', kind: 'rest' },
      { method: 'GET', path: '/api/logo?text=:text&style=retro&color=:color', kind: 'rest' },
      // The provider-backed operations with a valid start, so that their success paths (fake providers) are fuzzed too.
      { method: 'GET', path: '/api/imagine?prompt=a+fox+in+snow&model=dalle-3', kind: 'rest' },
      { method: 'GET', path: '/api/weather?location=Berlin&units=imperial', kind: 'rest' },
      { method: 'POST', path: '/api/v1/images/generations', kind: 'openai' },
      // The gateway's other wire formats, more often than their one row each (their bodies are the random objects).
      { method: 'POST', path: '/api/v1/responses', kind: 'openai' },
      { method: 'POST', path: '/api/v1/messages', kind: 'openai' },
      { method: 'POST', path: '/api/v1/embeddings', kind: 'openai' },
      { method: 'POST', path: '/api/v1/audio/transcriptions', kind: 'openai', multipart: true },
      // The coding agent, twice as often (it is also in utilityRoutes): a valid body needs only a prompt.
      { method: 'POST', path: '/api/agent', kind: 'rest' },
      // The speech providers, streamed from the fake providers.
      { method: 'GET', path: '/api/tts/openai?text=fuzz+speech&voice=nova', kind: 'rest' },
      { method: 'GET', path: '/api/tts/elevenlabs?text=fuzz+speech', kind: 'rest' },
      { method: 'GET', path: '/api/tts/polly?text=fuzz+speech&voice=Matthew', kind: 'rest' },
      { method: 'GET', path: '/api/tts/azure?text=fuzz+%3Cspeech%3E', kind: 'rest' },
      // The search-backed operations with a valid start; the image and audio URLs are public IP literals the fake provider never fetches.
      { method: 'GET', path: '/api/online?q=latest+news', kind: 'rest' },
      { method: 'GET', path: '/api/clips?q=cats', kind: 'rest' },
      { method: 'GET', path: `/api/lens?url=${encodeURIComponent('http://93.184.216.34/bridge.jpg')}`, kind: 'rest' },
      { method: 'GET', path: `/api/identify?url=${encodeURIComponent('http://93.184.216.34/song.mp3')}`, kind: 'rest' },
    ]
    const rng = prng(SEED)
    const problems: string[] = []
    let done = 0
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (done < REQUESTS) {
          done++
          const { problem } = await fire(server, rng, targets, [alice.token, bob.token, gateway.key], ids, png, contract)
          if (problem) problems.push(problem)
        }
      }),
    )
    if (process.env.PLAZA_FUZZ_VERBOSE) {
      console.log([...statuses].sort((a, b) => String(a[0]).localeCompare(String(b[0]))))
      // Every kind of problem once (the assertion shows the first ten).
      console.log([...new Set(problems.map((problem) => problem.replace(/^(\S+ )\S+( -> \d+: .{0,60}).*$/, '$1$2')))].join('\n'))
    }
    assert.equal(problems.slice(0, 10), [], `seed ${SEED}: ${problems.length} problems`)
    const health = await server.request('GET', '/health')
    assert.is(health.status, 200)
    // Data is intact, and the sessions of users the fuzzer could not act as still work.
    const detail = await server.request('GET', `/api/mobile/posts/detail/${carolPost.body.data.id}`, { token: carol.token })
    assert.is(detail.status, 200)
    assert.is(detail.body.data.post.content, 'untouched')
  } finally {
    await server.close()
    await standIns.close()
    await smtp.close()
  }
})

test.run()
