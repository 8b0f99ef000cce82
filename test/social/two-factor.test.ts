/**
 * Two-factor login with TOTP (issue 48), on the server's injected clock: the test plays the
 * authenticator app with the secret the server hands out (RFC 6238, auth/totp.ts's own code
 * generator, checked against the RFC's test vectors first).
 */
import { sql } from 'drizzle-orm'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { hashRecoveryCode, totpCodeAt } from '../../src/server/auth/totp.js'
import { DEFAULT_RATE_LIMITS } from '../../src/server/config.js'
import { manualClock, registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'

const API = '/api/mobile'
const PASSWORD = 'correct horse'

test("codes follow RFC 6238's test vectors (SHA-1, the secret 12345678901234567890)", () => {
  // Appendix B's 8-digit codes; the 6-digit code is their last six digits.
  const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'
  for (const [seconds, code] of [[59, '94287082'], [1111111109, '07081804'], [1111111111, '14050471'], [1234567890, '89005924'], [2000000000, '69279037']] as const) {
    assert.is(totpCodeAt(secret, new Date(seconds * 1000)), code.slice(2), `T = ${seconds}`)
  }
})

async function enrolled(server: TestServer, clock: ReturnType<typeof manualClock>) {
  const alice = await registerUser(server)
  const setup = await server.request('POST', `${API}/auth/2fa/setup`, { token: alice.token, body: { password: PASSWORD } })
  assert.is(setup.status, 200, JSON.stringify(setup.body))
  const secret = setup.body.data.secret as string
  const confirmed = await server.request('POST', `${API}/auth/2fa/confirm`, { token: alice.token, body: { code: totpCodeAt(secret, clock.clock()) } })
  assert.is(confirmed.status, 200, JSON.stringify(confirmed.body))
  return { alice, secret, recovery: confirmed.body.data.recovery_codes as string[], setup: setup.body.data }
}

const login = (server: TestServer, user: RegisteredUser, password = PASSWORD) => server.request('POST', `${API}/auth/login`, { body: { email: user.username, password } })
const second = (server: TestServer, challenge: string, factor: Record<string, string>) =>
  server.request('POST', `${API}/auth/login/2fa`, { body: { challenge_token: challenge, ...factor } })

test('enrol: the otpauth URI and QR codes, confirmation with the first code, ten recovery codes stored hashed', async () => {
  const clock = manualClock(new Date('2026-06-01T12:00:00Z'))
  const server = await startTestServer({ clock: clock.clock })
  try {
    const alice = await registerUser(server)
    assert.equal((await server.request('GET', `${API}/auth/2fa`, { token: alice.token })).body.data, { enabled: false, pending: false, recovery_codes_left: 0 })
    assert.is((await server.request('POST', `${API}/auth/2fa/setup`, { token: alice.token, body: { password: 'wrong password' } })).status, 403)
    const setup = await server.request('POST', `${API}/auth/2fa/setup`, { token: alice.token, body: { password: PASSWORD } })
    assert.is(setup.status, 200)
    const { secret, otpauth_url, qr_svg, qr_png } = setup.body.data
    assert.match(secret, /^[A-Z2-7]{32}$/, '160 bits, base32')
    const uri = new URL(otpauth_url)
    assert.is(uri.protocol, 'otpauth:')
    assert.is(uri.host, 'totp')
    assert.is(decodeURIComponent(uri.pathname), `/Plaza:${alice.username}`)
    assert.equal(Object.fromEntries(uri.searchParams), { issuer: 'Plaza', secret, algorithm: 'SHA1', digits: '6', period: '30' })
    assert.match(qr_svg, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/)
    assert.match(qr_png, /^data:image\/png;base64,/)
    const png = await sharp(Buffer.from(qr_png.split(',')[1], 'base64')).metadata()
    assert.equal([png.format, png.width === png.height], ['png', true])
    assert.equal((await server.request('GET', `${API}/auth/2fa`, { token: alice.token })).body.data, { enabled: false, pending: true, recovery_codes_left: 0 })
    assert.equal((await login(server, alice)).body.data.token !== undefined, true, 'not in force until confirmed')

    const wrong = await server.request('POST', `${API}/auth/2fa/confirm`, { token: alice.token, body: { code: totpCodeAt(secret, new Date(clock.clock().getTime() + 120_000)) } })
    assert.is(wrong.status, 400)
    assert.match(wrong.body.message, /does not match/)
    assert.is((await server.request('POST', `${API}/auth/2fa/confirm`, { token: alice.token, body: { code: '12345' } })).status, 400)
    const confirmed = await server.request('POST', `${API}/auth/2fa/confirm`, { token: alice.token, body: { code: totpCodeAt(secret, clock.clock()) } })
    assert.is(confirmed.status, 200)
    const codes = confirmed.body.data.recovery_codes as string[]
    assert.is(codes.length, 10)
    assert.is(new Set(codes).size, 10)
    assert.ok(codes.every((code) => /^[a-z2-9]{5}-[a-z2-9]{5}$/.test(code)))
    assert.equal((await server.request('GET', `${API}/auth/2fa`, { token: alice.token })).body.data, { enabled: true, pending: false, recovery_codes_left: 10 })
    const stored = await server.services.db.values<[string]>(sql`select code_hash from recovery_codes where user_id = ${alice.id}`)
    assert.equal(stored.map((row) => row[0]).sort(), codes.map(hashRecoveryCode).sort(), 'only hashes are stored')
    assert.is((await server.request('POST', `${API}/auth/2fa/setup`, { token: alice.token, body: { password: PASSWORD } })).status, 409, 'already on')
  } finally {
    await server.close()
  }
})

test('login answers a challenge; a code gives the session; a reused code, a code two steps off and a spent recovery code are refused', async () => {
  const clock = manualClock(new Date('2026-06-01T12:00:10Z'))
  const server = await startTestServer({ clock: clock.clock })
  try {
    const { alice, secret, recovery } = await enrolled(server, clock)
    clock.advance(30_000)
    const first = await login(server, alice)
    assert.is(first.status, 200)
    assert.equal(Object.keys(first.body.data).sort(), ['challenge_token', 'expires_at', 'methods', 'two_factor_required'])
    assert.is(first.body.data.expires_at, '2026-06-01 12:05:40')
    const code = totpCodeAt(secret, clock.clock())
    const done = await second(server, first.body.data.challenge_token, { code: code.slice(0, 3) + ' ' + code.slice(3) })
    assert.is(done.status, 200, JSON.stringify(done.body))
    assert.is(done.body.data.user.id, alice.id)
    assert.is((await server.request('GET', `${API}/user/profile`, { token: done.body.data.token })).status, 200)
    assert.is((await second(server, first.body.data.challenge_token, { code })).status, 401, 'a challenge gives one session')

    const reused = await second(server, (await login(server, alice)).body.data.challenge_token, { code })
    assert.equal([reused.status, reused.body.message], [401, 'Wrong code'], 'the same code never works twice')

    // One step of drift either side passes; two do not.
    clock.advance(60_000)
    const drift = (await login(server, alice)).body.data.challenge_token
    assert.is((await second(server, drift, { code: totpCodeAt(secret, new Date(clock.clock().getTime() - 60_000)) })).status, 401, 'two steps behind')
    assert.is((await second(server, drift, { code: totpCodeAt(secret, new Date(clock.clock().getTime() - 30_000)) })).status, 200, 'one step behind')

    const viaRecovery = await second(server, (await login(server, alice)).body.data.challenge_token, { recovery_code: recovery[3].toUpperCase() })
    assert.is(viaRecovery.status, 200, 'a recovery code, whatever its case')
    const spent = await second(server, (await login(server, alice)).body.data.challenge_token, { recovery_code: recovery[3] })
    assert.equal([spent.status, spent.body.message], [401, 'Wrong code'], 'once only')
    assert.is((await server.request('GET', `${API}/auth/2fa`, { token: viaRecovery.body.data.token })).body.data.recovery_codes_left, 9)

    const both = await second(server, (await login(server, alice)).body.data.challenge_token, { code: '123456', recovery_code: recovery[0] })
    assert.is(both.status, 400)
    assert.is((await login(server, alice, 'wrong password')).status, 401, 'the password still comes first')
  } finally {
    await server.close()
  }
})

test('a challenge lasts 5 minutes and 5 wrong codes; wrong codes are limited per account too', async () => {
  const clock = manualClock(new Date('2026-06-01T12:00:00Z'))
  const limits = { ...DEFAULT_RATE_LIMITS, auth: { max: 1000, windowMs: 60_000 }, account: { max: 7, windowMs: 3_600_000 } }
  const server = await startTestServer({ clock: clock.clock, rateLimits: limits })
  try {
    const { alice, secret } = await enrolled(server, clock)
    const wrongCode = () => (totpCodeAt(secret, clock.clock()) === '000000' ? '111111' : '000000')
    const challenge = (await login(server, alice)).body.data.challenge_token
    for (let i = 0; i < 5; i++) assert.is((await second(server, challenge, { code: wrongCode() })).status, 401)
    clock.advance(30_000)
    const spent = await second(server, challenge, { code: totpCodeAt(secret, clock.clock()) })
    assert.is(spent.status, 401)
    assert.match(spent.body.message, /log in again/)

    const late = (await login(server, alice)).body.data.challenge_token
    clock.advance(5 * 60_000)
    assert.match((await second(server, late, { code: totpCodeAt(secret, clock.clock()) })).body.message, /expired/)

    // Seven wrong codes an hour per account: two more, and then even the right one waits.
    const next = (await login(server, alice)).body.data.challenge_token
    for (let i = 0; i < 2; i++) assert.is((await second(server, next, { code: wrongCode() })).status, 401)
    const limited = await second(server, next, { code: totpCodeAt(secret, clock.clock()) })
    assert.is(limited.status, 429)
    assert.ok(Number(limited.headers.get('retry-after')) > 0)
  } finally {
    await server.close()
  }
})

test('turning it off, and new recovery codes, take the password and a code', async () => {
  const clock = manualClock(new Date('2026-06-01T12:00:00Z'))
  const server = await startTestServer({ clock: clock.clock })
  try {
    const { alice, secret, recovery } = await enrolled(server, clock)
    clock.advance(30_000)
    const proof = (body: Record<string, string>) => ({ token: alice.token, body })
    assert.is((await server.request('POST', `${API}/auth/2fa/recovery_codes`, proof({ password: 'wrong password', code: totpCodeAt(secret, clock.clock()) }))).status, 403)
    const wrong = await server.request('POST', `${API}/auth/2fa/disable`, proof({ password: PASSWORD, code: '000000' === totpCodeAt(secret, clock.clock()) ? '111111' : '000000' }))
    assert.equal([wrong.status, wrong.body.message], [403, 'Wrong code'])
    const fresh = await server.request('POST', `${API}/auth/2fa/recovery_codes`, proof({ password: PASSWORD, recovery_code: recovery[0] }))
    assert.is(fresh.status, 200)
    assert.is((await second(server, (await login(server, alice)).body.data.challenge_token, { recovery_code: recovery[1] })).status, 401, 'the old codes are gone')
    const off = await server.request('POST', `${API}/auth/2fa/disable`, proof({ password: PASSWORD, code: totpCodeAt(secret, clock.clock()) }))
    assert.is(off.status, 200)
    assert.equal(off.body.data, { enabled: false, pending: false, recovery_codes_left: 0 })
    assert.type((await login(server, alice)).body.data.token, 'string', 'a session at once again')
    assert.is((await server.request('POST', `${API}/auth/2fa/disable`, proof({ password: PASSWORD, code: totpCodeAt(secret, clock.clock()) }))).status, 409)
  } finally {
    await server.close()
  }
})

test.run()
