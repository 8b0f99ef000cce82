/**
 * What each rate-limit class counts over HTTP (issues 44 and 47): the `auth` class counts failed
 * authentications only, per address and per account; costly anonymous work counts in the `heavy`
 * class by the size of its input; every counted answer carries the IETF RateLimit fields, and a
 * 429 `Retry-After` too.
 */
import http from 'node:http'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { DEFAULT_RATE_LIMITS, parseRateLimits, type RateLimits } from '../../src/server/config.js'
import { utilityRoutes } from '../../src/server/rest/utility.js'
import { manualClock, registerUser, startTestServer, type TestResponse, type TestServer } from '../helpers/server.js'

/** The items of a RateLimit or RateLimit-Policy field by name, their parameters as numbers. */
function fieldItems(value: string | null): Record<string, Record<string, number>> {
  const items: Record<string, Record<string, number>> = {}
  for (const item of (value ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const [name, ...params] = item.split(';')
    assert.match(name, /^"[a-z]+"$/, `an item is a String: ${item}`)
    items[JSON.parse(name)] = Object.fromEntries(params.map((param) => param.split('=')).map(([key, number]) => [key, Number(number)]))
  }
  return items
}

const limitsOf = (res: TestResponse) => fieldItems(res.headers.get('ratelimit'))
const policiesOf = (res: TestResponse) => fieldItems(res.headers.get('ratelimit-policy'))

const login = (server: TestServer, email: string, password: string, headers: Record<string, string> = {}) =>
  server.request('POST', '/api/mobile/auth/login', { body: { email, password }, headers })

const account = (name: string) => ({ username: name, email: `${name}@example.com`, password: 'correct horse', full_name: name })

test('issue 47: a first set-up (two registrations, a duplicate, a typo, two logins) never trips the login limit', async () => {
  const server = await startTestServer({ rateLimits: DEFAULT_RATE_LIMITS })
  const statuses: number[] = []
  for (const name of ['ann', 'bob']) statuses.push((await server.request('POST', '/api/mobile/auth/register', { body: account(name) })).status)
  statuses.push((await server.request('POST', '/api/mobile/auth/register', { body: account('ann') })).status)
  statuses.push((await login(server, 'ann@example.com', 'correct hrose')).status)
  statuses.push((await login(server, 'ann@example.com', 'correct horse')).status)
  statuses.push((await login(server, 'bob', 'correct horse')).status)
  assert.equal(statuses, [201, 201, 409, 401, 200, 200])
  // Malformed bodies are not failed authentications either.
  for (let i = 0; i < 8; i++) assert.is((await server.request('POST', '/api/mobile/auth/login', { raw: '{"email":', headers: { 'content-type': 'application/json' } })).status, 400)
  for (let i = 0; i < 8; i++) assert.is((await login(server, '', '')).status, 400)
  assert.is((await login(server, 'ann', 'correct horse')).status, 200)
  await server.close()
})

test('failed logins count per account too: guesses from many addresses lock that account, not the others', async () => {
  const clock = manualClock()
  const server = await startTestServer({ clock: clock.clock, rateLimits: DEFAULT_RATE_LIMITS, env: { PLAZA_TRUST_PROXY: '1' } })
  await registerUser(server, 'victim')
  const other = await registerUser(server, 'bystander')
  const from = (address: string) => ({ 'x-forwarded-for': address })
  // Five guesses, each from an address of its own, by username and by email alike: one account, one count.
  for (let i = 1; i <= 5; i++) assert.is((await login(server, i % 2 ? 'victim' : 'VICTIM@example.com', `guess${i}xx`, from(`198.51.100.${i}`))).status, 401)
  const locked = await login(server, 'victim', 'correct horse', from('198.51.100.99'))
  assert.is(locked.status, 429, 'even the right password from a fresh address: guessing gains nothing')
  assert.is(locked.headers.get('retry-after'), '60')
  assert.equal(limitsOf(locked).auth, { r: 0, t: 60 })
  assert.is((await login(server, other.username, 'correct horse', from('198.51.100.99'))).status, 200, 'another account is not locked')
  // An unknown name is counted by name, as an account would be: guessing at one tells nothing.
  for (let i = 1; i <= 5; i++) assert.is((await login(server, 'nobody', `guess${i}xx`, from(`203.0.113.${i}`))).status, 401)
  assert.is((await login(server, 'nobody', 'guess6xx', from('203.0.113.99'))).status, 429)
  clock.advance(60_000)
  assert.is((await login(server, 'victim', 'correct horse', from('198.51.100.99'))).status, 200, 'the next window opens it again')
  await server.close()
})

test('a wrong current password (password change, account deletion) counts as a failure; logout and refresh do not count in auth', async () => {
  const server = await startTestServer({ rateLimits: { ...DEFAULT_RATE_LIMITS, auth: { max: 3, windowMs: 60_000 } } })
  const user = await registerUser(server)
  let token = user.token
  for (let i = 0; i < 6; i++) {
    const refreshed = await server.request('POST', '/api/mobile/auth/refresh', { token })
    assert.is(refreshed.status, 200)
    assert.equal(Object.keys(limitsOf(refreshed)), ['default'])
    token = refreshed.body.data.token
  }
  user.token = token
  const change = () => server.request('PUT', '/api/mobile/user/password', { token: user.token, body: { current_password: 'not it at all', new_password: 'a brand new one' } })
  const first = await change()
  assert.is(first.status, 403)
  assert.equal(limitsOf(first).auth, { r: 2, t: 60 })
  assert.is((await server.request('DELETE', '/api/mobile/user/account', { token: user.token, body: { password: 'not it either' } })).status, 403)
  assert.is((await change()).status, 403)
  assert.is((await change()).status, 429)
  await server.close()
})

test('issue 47: RateLimit and RateLimit-Policy on every counted answer (REST, tRPC, handler routes); a 429 adds Retry-After', async () => {
  const clock = manualClock()
  const server = await startTestServer({ clock: clock.clock, rateLimits: { ...DEFAULT_RATE_LIMITS, default: { max: 3, windowMs: 60_000 } } })
  const user = await registerUser(server)
  const first = await server.request('GET', '/api/mobile/user/profile', { token: user.token })
  assert.equal(policiesOf(first), { default: { q: 3, w: 60 } })
  assert.equal(limitsOf(first), { default: { r: 2, t: 60 } })
  clock.advance(15_000)
  const trpc = await server.request('GET', '/trpc/users.profile', { token: user.token })
  assert.is(trpc.status, 200)
  assert.equal(limitsOf(trpc), { default: { r: 1, t: 45 } })
  await server.request('GET', '/api/mobile/posts/feed', { token: user.token })
  const refused = await server.request('GET', '/api/mobile/posts/feed', { token: user.token })
  assert.is(refused.status, 429)
  assert.is(refused.headers.get('retry-after'), '45')
  assert.equal(limitsOf(refused), { default: { r: 0, t: 45 } })
  assert.equal(policiesOf(refused), { default: { q: 3, w: 60 } })
  // A failed login shows the address's failures left beside its call count.
  const failed = await login(server, user.username, 'wrong wrong')
  assert.is(failed.status, 401)
  assert.equal(policiesOf(failed), { default: { q: 3, w: 60 }, auth: { q: 5, w: 60 } })
  assert.equal(limitsOf(failed).auth, { r: 4, t: 60 })
  // A route no limit counts carries none.
  assert.is((await server.request('GET', '/health')).headers.get('ratelimit'), null)
  await server.close()
})

/** A 10 KB snippet, as the attacker sent. */
const BIG_SNIPPET = 'const x = 1 // padding\n'.repeat(445)
/** The 1,890-character TTS text. */
const LONG_TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(42)

test('issue 44: costly anonymous work counts in the heavy class by input size, not in default', async () => {
  const limits: RateLimits = { ...DEFAULT_RATE_LIMITS, heavy: { max: 60, windowMs: 60_000 } }
  const server = await startTestServer({ clock: manualClock().clock, rateLimits: limits })
  // Each request is refused by its handler (a bad theme or voice): the units are spent before it runs, and nothing renders.
  const spent = async (res: TestResponse) => {
    assert.is(res.status, 400, JSON.stringify(res.body))
    assert.equal(Object.keys(limitsOf(res)), ['heavy'], 'a heavy call does not count in default')
    assert.equal(policiesOf(res).heavy, { q: 60, w: 60 })
    return limitsOf(res).heavy.r
  }
  const small = await spent(await server.request('POST', '/api/codeimage', { body: { codeSnippet: 'x = 1', theme: 'nope' } }))
  assert.is(small, 59, 'a short snippet costs 1 unit')
  const big = await spent(await server.request('POST', '/api/codeimage', { body: { codeSnippet: BIG_SNIPPET, theme: 'nope' } }))
  assert.is(small - big, 11, 'a 10 KB snippet costs 11')
  const short = await spent(await server.request('GET', '/api/tts/flite?voice=nope&text=hello'))
  assert.is(big - short, 1, 'a short line to speak costs 1')
  const long = await spent(await server.request('GET', `/api/tts/flite?voice=nope&text=${encodeURIComponent(LONG_TEXT)}`))
  assert.ok(short - long >= 19, `a 1,890-character text costs about 20 (${short - long})`)
  const viaTrpc = await server.request('POST', '/trpc/codeimage.create', { body: { codeSnippet: BIG_SNIPPET, theme: 'nope' } })
  assert.is(viaTrpc.status, 400)
  assert.is(long - limitsOf(viaTrpc).heavy.r, 11, 'the same snippet over tRPC costs the same')
  const program = await spent(await server.request('POST', '/api/execute', { body: { language: 'cobol-66', code: 'x' } }))
  assert.is(limitsOf(viaTrpc).heavy.r - program, 5, 'a program run costs 5')
  // What is left is less than the next long text: refused, with Retry-After, and nothing counted.
  const over = await server.request('GET', `/api/tts/flite?voice=nope&text=${encodeURIComponent(LONG_TEXT + LONG_TEXT)}`)
  assert.is(over.status, 429)
  assert.is(over.headers.get('retry-after'), '60')
  assert.equal(limitsOf(over).heavy, { r: program, t: 60 }, 'what is left is what a smaller request may still spend')
  assert.is(await spent(await server.request('GET', '/api/tts/flite?voice=nope&text=hi')), program - 1, 'a refused request spends nothing')
  // The social API's budget is untouched.
  const user = await registerUser(server)
  assert.equal(limitsOf(await server.request('GET', '/api/mobile/user/profile', { token: user.token })).default, { r: 99, t: 60 })
  await server.close()
})

test('a heavy request of unknown size (chunked) is charged the whole window; the class is set by PLAZA_RATE_LIMITS', async () => {
  const server = await startTestServer({ clock: manualClock().clock, rateLimits: parseRateLimits('heavy=30') })
  const { hostname, port } = new URL(server.url)
  const chunked = await new Promise<{ status: number; ratelimit: string | undefined }>((resolve, reject) => {
    const req = http.request({ hostname, port, method: 'POST', path: '/api/codeimage', headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume()
      resolve({ status: res.statusCode!, ratelimit: res.headers.ratelimit as string | undefined })
    })
    req.on('error', reject)
    // Written in two parts, so node sends it chunked rather than with a Content-Length.
    req.write('{"codeSnippet":"x",')
    req.end('"theme":"nope"}')
  })
  assert.is(chunked.status, 400)
  assert.equal(fieldItems(chunked.ratelimit ?? null).heavy, { r: 0, t: 60 })
  assert.is((await server.request('GET', '/api/tts/flite?voice=nope&text=hi')).status, 429)
  await server.close()
})

test('issue 44: every costly anonymous operation names its heavy cost in the catalog (and so reaches the route table)', () => {
  const heavy = utilityRoutes.filter((route) => 'handle' in route && route.cost).map((route) => `${route.method} /api${route.path}`)
  assert.equal(heavy.sort(), [
    'GET /api/diffuser/expand', 'GET /api/fakepost', 'GET /api/imageFx', 'GET /api/logo', 'GET /api/media', 'GET /api/meme',
    'GET /api/tts/azure', 'GET /api/tts/elevenlabs', 'GET /api/tts/espeak', 'GET /api/tts/flite', 'GET /api/tts/openai', 'GET /api/tts/polly',
    'GET /api/upscale', 'POST /api/agent', 'POST /api/carbon', 'POST /api/codeimage', 'POST /api/diffuser/expand', 'POST /api/execute',
    'POST /api/files', 'POST /api/imageFx', 'POST /api/upscale',
  ].sort())
})

test.run()
