/**
 * Password reset and email verification by mail (issue 48), against a real SMTP server on loopback
 * (test/helpers/smtp.ts: smtp-server, with a password). The mail goes through the outbox and the
 * sender loop (drained here on the test's clock), and the tests follow the links in what arrives.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { newSecret } from '../../src/server/auth/tokens.js'
import { DEFAULT_RATE_LIMITS } from '../../src/server/config.js'
import type { Logger } from '../../src/server/logger.js'
import { startSmtpServer, type SmtpServer } from '../helpers/smtp.js'
import { manualClock, registerUser, startTestServer, tempDir, type RegisteredUser, type TestServer } from '../helpers/server.js'

const API = '/api/mobile'
const PASSWORD = 'correct horse'
const FORGOT = 'If an account matches, a link to reset its password has been mailed to its address'

let smtp: SmtpServer
test.before(async () => {
  smtp = await startSmtpServer()
})
test.after(async () => {
  await smtp.close()
})

const mailEnv = (extra: Record<string, string> = {}) => ({
  // Its public URL is replaced by the server's own once it listens (below): the links must lead to it.
  ...smtp.env,
  // The sender runs when a test drains it.
  PLAZA_DELIVERY_POLL: '60s',
  ...extra,
})

async function mailServer(options: { env?: Record<string, string>; rateLimits?: typeof DEFAULT_RATE_LIMITS; logger?: Logger } = {}) {
  const clock = manualClock(new Date('2026-06-01T12:00:00Z'))
  const server = await startTestServer({ env: mailEnv(options.env), clock: clock.clock, rateLimits: options.rateLimits, logger: options.logger })
  server.services.config.publicUrl = server.url
  return { server, clock, drain: () => server.services.delivery.drain() }
}

/** The one link in a message's text part that leads to `server`. */
function linkIn(text: string, server: TestServer): URL {
  const links = [...text.matchAll(/https?:\/\/\S+/g)].map((m) => new URL(m[0])).filter((url) => url.origin === server.url)
  assert.is(links.length, 1, `one link to the server in:\n${text}`)
  return links[0]
}

const outbox = (server: TestServer) =>
  server.services.db.all<{ kind: string; recipient: string; status: string; attempts: number; text_body: string | null; last_error: string | null }>(
    sql`select kind, recipient, status, attempts, text_body, last_error from mail_outbox order by id`,
  )

const login = (server: TestServer, email: string, password: string) => server.request('POST', `${API}/auth/login`, { body: { email, password } })

test("a mailed secret never starts with '-', which a command line would take for a flag: such a draw is drawn again", () => {
  // 0xF8 makes a first base64url character of '-' (index 62); the second draw starts with 'A'.
  const draws = [Buffer.alloc(32, 0xf8), Buffer.alloc(32, 0x00)]
  const asked: number[] = []
  const secret = newSecret((size) => (asked.push(size), draws.shift()!))
  assert.equal(asked, [32, 32])
  assert.is(secret, Buffer.alloc(32, 0x00).toString('base64url'))
  assert.is(Buffer.alloc(32, 0xf8).toString('base64url')[0], '-')
  assert.is(newSecret().length, 43)
})

test('forgot, the mail, its link, the reset: every old session is gone; an unknown address gets the same answer and no mail', async () => {
  const { server, drain } = await mailServer()
  try {
    const alice = await registerUser(server)
    const email = `${alice.username}@example.com`
    const phone = (await login(server, email, PASSWORD)).body.data.token as string
    await drain()
    const start = smtp.received.length

    const asked = await server.request('POST', `${API}/auth/password/forgot`, { body: { email } })
    assert.equal([asked.status, asked.body.message, asked.body.data], [200, FORGOT, null])
    await drain()
    const [message] = (await smtp.waitFor(start + 1)).slice(start)
    assert.equal(message.to, [email])
    assert.match(message.mail.from!.text, /no-reply@plaza\.example/)
    assert.match(message.mail.subject!, /^Reset your password on 127\.0\.0\.1:\d+$/)
    const link = linkIn(message.mail.text!, server)
    assert.is(link.pathname, `${API}/auth/password/reset`)
    const token = link.searchParams.get('token')!
    assert.ok(message.mail.text!.includes(token), 'the code is in the text too')
    assert.ok(String(message.mail.html).includes(link.href.replaceAll('&', '&amp;')), 'and the link in the HTML part')

    // The link opens a page (a GET never uses the token up); the page posts to the same path.
    const page = await fetch(link)
    assert.is(page.status, 200)
    assert.match(page.headers.get('content-type')!, /^text\/html/)
    assert.match(page.headers.get('content-security-policy')!, /default-src 'none'/)
    assert.match(await page.text(), /name="password"/)
    const reset = await server.request('POST', link.pathname, { body: { token, password: 'a brand new password' } })
    assert.is(reset.status, 200, JSON.stringify(reset.body))
    assert.is(reset.body.data.revoked_sessions, 2)
    for (const old of [alice.token, phone]) assert.is((await server.request('GET', `${API}/user/profile`, { token: old })).status, 401, 'old sessions are gone')
    assert.is((await login(server, email, PASSWORD)).status, 401)
    const fresh = await login(server, email, 'a brand new password')
    assert.is(fresh.status, 200)
    assert.is(fresh.body.data.user.email_verified, true, 'the reset proved the mailbox')

    const again = await server.request('POST', link.pathname, { body: { token, password: 'yet another password' } })
    assert.is(again.status, 400, 'a token works once')
    assert.match(again.body.message, /invalid, used or expired/)
    assert.is((await fetch(link)).status, 400, 'and its page says so')

    // Unknown address or username: the same answer, and nothing is queued or sent.
    const rows = (await outbox(server)).length
    for (const unknown of ['nobody@example.com', 'nobody_at_all']) {
      const res = await server.request('POST', `${API}/auth/password/forgot`, { body: { email: unknown } })
      assert.equal([res.status, res.body.message, res.body.data], [asked.status, asked.body.message, asked.body.data])
    }
    await drain()
    assert.is((await outbox(server)).length, rows)
    assert.is(smtp.received.length, start + 1)
    assert.equal(
      (await outbox(server)).map((row) => row.text_body),
      (await outbox(server)).map(() => null),
      'a sent message keeps no body (its link was a secret)',
    )
  } finally {
    await server.close()
  }
})

test('a reset link expires after 30 minutes; a newer one replaces an older one; bad input is a 400', async () => {
  const { server, clock, drain } = await mailServer()
  try {
    const alice = await registerUser(server)
    const email = `${alice.username}@example.com`
    await drain()
    const tokenOfNext = async () => {
      const start = smtp.received.length
      assert.is((await server.request('POST', `${API}/auth/password/forgot`, { body: { email: alice.username } })).status, 200)
      await drain()
      return linkIn((await smtp.waitFor(start + 1))[start].mail.text!, server).searchParams.get('token')!
    }
    const first = await tokenOfNext()
    const second = await tokenOfNext()
    const use = (token: string) => server.request('POST', `${API}/auth/password/reset`, { body: { token, password: 'another password' } })
    assert.is((await use(first)).status, 400, 'replaced by the newer one')
    clock.advance(30 * 60_000)
    assert.is((await use(second)).status, 400, 'expired')
    const third = await tokenOfNext()
    assert.is((await server.request('POST', `${API}/auth/password/reset`, { body: { token: third, password: 'short' } })).status, 400)
    assert.is((await server.request('POST', `${API}/auth/password/reset`, { body: { password: 'long enough' } })).status, 400)
    assert.is((await server.request('POST', `${API}/auth/password/forgot`, { body: {} })).status, 400)
    assert.is((await use(third)).status, 200, 'the bad tries did not use it up')
    assert.is((await login(server, email, 'another password')).status, 200)
  } finally {
    await server.close()
  }
})

test('without SMTP the mail routes answer 503 saying what to set, and an email change applies at once, unverified', async () => {
  const server = await startTestServer()
  try {
    const alice = await registerUser(server)
    for (const [method, route, token] of [['POST', '/auth/password/forgot', undefined], ['POST', '/auth/email/resend', alice.token]] as const) {
      const res = await server.request(method, API + route, { token, body: { email: 'x@example.com' } })
      assert.is(res.status, 503, route)
      assert.match(res.body.message, /PLAZA_SMTP_URL.*PLAZA_MAIL_FROM/)
    }
    const changed = await server.request('PUT', `${API}/user/email`, { token: alice.token, body: { email: 'new-alice@example.com', password: PASSWORD } })
    assert.is(changed.status, 200, JSON.stringify(changed.body))
    assert.equal(changed.body.data, { email: 'new-alice@example.com', email_verified: false, pending_email: null })
    assert.is((await login(server, 'new-alice@example.com', PASSWORD)).status, 200)
  } finally {
    await server.close()
  }
})

test('registration mails a verification link; with PLAZA_REQUIRE_VERIFIED_EMAIL nothing but upkeep works until it is opened', async () => {
  const { server, drain } = await mailServer({ env: { PLAZA_REQUIRE_VERIFIED_EMAIL: '1' } })
  try {
    const start = smtp.received.length
    const registered = await server.request('POST', `${API}/auth/register`, { body: { username: 'verif_a', email: 'verif_a@example.com', password: PASSWORD } })
    assert.is(registered.status, 201)
    assert.is(registered.body.data.user.email_verified, false)
    const token = registered.body.data.token as string
    const blocked = await server.request('POST', `${API}/posts/create`, { token, body: { content: 'hi' } })
    assert.is(blocked.status, 403)
    assert.match(blocked.body.message, /Confirm your email address first/)
    assert.is((await server.request('GET', `${API}/notifications/stream`, { token })).status, 403, 'handler routes too')
    assert.is((await server.request('GET', `${API}/auth/sessions`, { token })).status, 200, 'upkeep is allowed')
    assert.equal((await server.request('GET', `${API}/user/email`, { token })).body.data, { email: 'verif_a@example.com', email_verified: false, pending_email: null })

    await drain()
    const [message] = (await smtp.waitFor(start + 1)).slice(start)
    assert.equal(message.to, ['verif_a@example.com'])
    assert.match(message.mail.subject!, /^Confirm your email address/)
    const link = linkIn(message.mail.text!, server)
    assert.is(link.pathname, `${API}/auth/email/verify`)
    assert.match(await (await fetch(link)).text(), /Confirm my address/)
    const verified = await server.request('POST', link.pathname, { body: { token: link.searchParams.get('token') } })
    assert.is(verified.status, 200, JSON.stringify(verified.body))
    assert.equal(verified.body.data, { email: 'verif_a@example.com', email_verified: true, pending_email: null })
    assert.is((await server.request('POST', `${API}/posts/create`, { token, body: { content: 'hi' } })).status, 201, 'the same session works now')
    const resend = await server.request('POST', `${API}/auth/email/resend`, { token })
    assert.is(resend.status, 409, 'nothing left to verify')
  } finally {
    await server.close()
  }
})

test('changing the email: pending until the link mailed to the new address is opened; taken, unchanged and wrong-password changes are refused', async () => {
  const { server, drain } = await mailServer()
  try {
    const [alice, bob] = [await registerUser(server), await registerUser(server)]
    await drain()
    const change = (body: Record<string, unknown>, user: RegisteredUser = alice) => server.request('PUT', `${API}/user/email`, { token: user.token, body })
    assert.is((await change({ email: 'alice-new@example.com', password: 'wrong password' })).status, 403)
    assert.is((await change({ email: `${bob.username}@example.com`, password: PASSWORD })).status, 409)
    assert.is((await change({ email: `${alice.username.toUpperCase()}@EXAMPLE.COM`, password: PASSWORD })).status, 400)
    assert.is((await change({ email: 'not an address', password: PASSWORD })).status, 400)
    const start = smtp.received.length
    const pending = await change({ email: 'alice-new@example.com', password: PASSWORD })
    assert.is(pending.status, 200)
    assert.equal(pending.body.data, { email: `${alice.username}@example.com`, email_verified: false, pending_email: 'alice-new@example.com' })
    assert.is((await login(server, 'alice-new@example.com', PASSWORD)).status, 401, 'not the address yet')
    await drain()
    const [message] = (await smtp.waitFor(start + 1)).slice(start)
    assert.equal(message.to, ['alice-new@example.com'])
    const token = linkIn(message.mail.text!, server).searchParams.get('token')
    const done = await server.request('POST', `${API}/auth/email/verify`, { body: { token } })
    assert.equal(done.body.data, { email: 'alice-new@example.com', email_verified: true, pending_email: null })
    assert.is((await login(server, 'alice-new@example.com', PASSWORD)).status, 200)
  } finally {
    await server.close()
  }
})

test('SMTP failures: a 451 is retried after a backoff, a 550 gives up; either way the body goes and the token never reaches the log', async () => {
  const lines: string[] = []
  const record = (level: string) => (message: string, detail?: Record<string, unknown>) => void lines.push(JSON.stringify({ level, message, ...detail }))
  const logger: Logger = { error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') }
  const { server, clock, drain } = await mailServer({ logger })
  try {
    const alice = await registerUser(server)
    await drain()
    const start = smtp.received.length
    smtp.refuse(451)
    assert.is((await server.request('POST', `${API}/auth/password/forgot`, { body: { email: alice.username } })).status, 200)
    await drain()
    let [row] = (await outbox(server)).slice(-1)
    assert.equal([row.status, row.attempts], ['pending', 1])
    assert.match(row.last_error!, /451/)
    assert.is(smtp.received.length, start)
    clock.advance(45_000)
    await drain()
    ;[row] = (await outbox(server)).slice(-1)
    assert.equal([row.status, row.attempts, row.text_body], ['sent', 2, null])
    const token = linkIn((await smtp.waitFor(start + 1))[start].mail.text!, server).searchParams.get('token')!

    smtp.refuse(550)
    assert.is((await server.request('POST', `${API}/auth/password/forgot`, { body: { email: alice.username } })).status, 200)
    await drain()
    ;[row] = (await outbox(server)).slice(-1)
    assert.equal([row.status, row.attempts, row.text_body], ['failed', 1, null])
    assert.match(row.last_error!, /550/)

    const log = lines.join('\n')
    assert.match(log, /mail not sent; it is retried/)
    assert.not.ok(log.includes(token), 'no token in the log')
    assert.not.ok(log.includes('smtp secret') || log.includes(encodeURIComponent('smtp secret')), 'nor the SMTP password')
  } finally {
    await server.close()
  }
})

test('per account, mail past the hourly limit is quietly not sent (the answer stays the same)', async () => {
  const { server, drain } = await mailServer({ rateLimits: { ...DEFAULT_RATE_LIMITS, auth: { max: 1000, windowMs: 60_000 }, account: { max: 2, windowMs: 3_600_000 } } })
  try {
    const alice = await registerUser(server)
    await drain()
    const rows = (await outbox(server)).length
    for (let i = 0; i < 4; i++) {
      const res = await server.request('POST', `${API}/auth/password/forgot`, { body: { email: alice.username } })
      assert.equal([res.status, res.body.message], [200, FORGOT])
    }
    assert.is((await outbox(server)).length, rows + 2)
    const resend = await server.request('POST', `${API}/auth/email/resend`, { token: alice.token })
    assert.is(resend.status, 429, 'a signed-in caller is told')
  } finally {
    await server.close()
  }
})

test('an operator can replace the templates; a template with an unknown placeholder stops the start', async () => {
  const dir = path.join(tempDir(), 'templates')
  mkdirSync(dir)
  writeFileSync(path.join(dir, 'password_reset.subject'), 'Your {{instance}} reset\n')
  writeFileSync(path.join(dir, 'password_reset.txt'), 'Hi {{username}}! Go to {{link}} within {{expires_minutes}} minutes.\n')
  const { server, drain } = await mailServer({ env: { PLAZA_MAIL_TEMPLATES: dir } })
  try {
    const alice = await registerUser(server)
    await drain()
    const start = smtp.received.length
    await server.request('POST', `${API}/auth/password/forgot`, { body: { email: alice.username } })
    await drain()
    const [message] = (await smtp.waitFor(start + 1)).slice(start)
    assert.match(message.mail.subject!, /^Your 127\.0\.0\.1:\d+ reset$/)
    assert.match(message.mail.text!, new RegExp(`^Hi ${alice.username}! Go to http://127\\.0\\.0\\.1:\\d+/api/mobile/auth/password/reset\\?token=\\S+ within 30 minutes\\.`))
    assert.match(String(message.mail.html), /Choose a new password/, 'the HTML part not replaced stays built in')
  } finally {
    await server.close()
  }
  writeFileSync(path.join(dir, 'verify_email.html'), '<p>{{password}}</p>')
  try {
    await startTestServer({ env: mailEnv({ PLAZA_MAIL_TEMPLATES: dir }) })
    assert.unreachable('started with a broken template')
  } catch (error) {
    assert.match(String((error as Error).message), /verify_email\.html uses \{\{password\}\}, which does not exist/)
  }
})

test.run()
