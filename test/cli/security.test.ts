/**
 * The CLI of issue 48 against a real server: two-factor login (`social 2fa ...`, `social login
 * --code`), password reset and email by mail (`social password forgot|reset`, `social email ...`,
 * with a real SMTP server on loopback), Web Push subscriptions (`social push ...`, at the loopback
 * push service: the test switch), and the operator's `admin mail`.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { totpCodeAt } from '../../src/server/auth/totp.js'
import { startPushService, type PushService } from '../helpers/push-service.js'
import { startSmtpServer, type SmtpServer } from '../helpers/smtp.js'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { runCli, shell } from './cli.js'

const PASSWORD = 'correct horse battery'
let server: TestServer
let smtp: SmtpServer
let push: PushService

test.before(async () => {
  smtp = await startSmtpServer()
  push = await startPushService()
  server = await startTestServer({
    env: {
      ...smtp.env,
      PLAZA_FETCH_ALLOW_PRIVATE: '1',
      PLAZA_DELIVERY_POLL: '60s',
    },
  })
  server.services.config.publicUrl = server.url
})

test.after(async () => {
  await server.close()
  await push.close()
  await smtp.close()
})

/** The code of the newest mail to `address`, once the outbox is sent. */
async function mailedToken(address: string): Promise<string> {
  await server.services.delivery.drain()
  const mail = smtp.received.filter((m) => m.to.includes(address)).at(-1)!
  return new URL(/https?:\/\/\S+/.exec(mail.mail.text!)![0]).searchParams.get('token')!
}

test('social 2fa enable, confirm; login asks for --code; a reused code fails; a recovery code works once; disable', async () => {
  const me = shell({ url: server.url })
  await me.json(['social', 'register', '-u', 'tfa_cli', '-e', 'tfa_cli@example.com', '--password-stdin'], { input: PASSWORD })
  assert.is((await me.json(['social', '2fa'])).enabled, false)

  const setup = await me.json(['social', '2fa', 'enable', '--password-stdin'], { input: PASSWORD })
  assert.match(setup.otpauth_url, /^otpauth:\/\/totp\//)
  assert.is(setup.recovery_codes, null, 'not confirmed without a terminal')
  const human = await me.run(['social', '2fa'])
  assert.match(human.stdout, /set up but not confirmed/)
  const first = totpCodeAt(setup.secret, new Date())
  const { recovery_codes } = await me.json(['social', '2fa', 'confirm', first])
  assert.is(recovery_codes.length, 10)

  const other = shell({ url: server.url })
  const noCode = await other.run(['social', 'login', '-e', 'tfa_cli', '--password-stdin'], { input: PASSWORD })
  assert.is(noCode.code, 2, noCode.stderr)
  assert.match(noCode.stderr, /two-factor login is on for this account: pass --code \(or --recovery-code\)/)

  // The confirmation used that code: it never works again.
  const reused = await other.run(['social', 'login', '-e', 'tfa_cli', '--password-stdin', '--code', first], { input: PASSWORD })
  assert.is(reused.code, 1)
  assert.match(reused.stderr, /Wrong code/)
  const viaRecovery = await other.json(['social', 'login', '-e', 'tfa_cli', '--password-stdin', '--recovery-code', recovery_codes[0]], { input: PASSWORD })
  assert.is(viaRecovery.user.username, 'tfa_cli')
  assert.is((await other.json(['social', 'whoami'])).username, 'tfa_cli')
  const twice = await shell({ url: server.url }).run(['social', 'login', '-e', 'tfa_cli', '--password-stdin', '--recovery-code', recovery_codes[0]], { input: PASSWORD })
  assert.is(twice.code, 1)

  const next = totpCodeAt(setup.secret, new Date(Date.now() + 30_000))
  const renewed = await me.json(['social', '2fa', 'recovery-codes', '--password-stdin', '--recovery-code', recovery_codes[1]], { input: PASSWORD })
  assert.is(renewed.recovery_codes.length, 10)
  const off = await me.json(['social', '2fa', 'disable', '--password-stdin', '--code', next], { input: PASSWORD })
  assert.equal(off, { enabled: false, pending: false, recovery_codes_left: 0 })
  assert.is((await shell({ url: server.url }).json(['social', 'login', '-e', 'tfa_cli', '--password-stdin'], { input: PASSWORD })).user.username, 'tfa_cli')
})

test('social password forgot and reset, social email change, verify and resend; admin mail lists the outbox without bodies', async () => {
  const me = shell({ url: server.url })
  await me.json(['social', 'register', '-u', 'mail_cli', '-e', 'mail_cli@example.com', '--password-stdin'], { input: PASSWORD })
  const state = await me.json(['social', 'email'])
  assert.equal(state, { email: 'mail_cli@example.com', email_verified: false, pending_email: null })
  assert.equal(await me.json(['social', 'email', 'verify', await mailedToken('mail_cli@example.com')]), { email: 'mail_cli@example.com', email_verified: true, pending_email: null })

  const changed = await me.json(['social', 'email', 'change', 'mail_cli2@example.com', '--password-stdin'], { input: PASSWORD })
  assert.is(changed.pending_email, 'mail_cli2@example.com')
  assert.is((await me.json(['social', 'email', 'resend'])), null)
  await me.json(['social', 'email', 'verify', await mailedToken('mail_cli2@example.com')])
  assert.is((await me.json(['social', 'email'])).email, 'mail_cli2@example.com')

  const anyone = shell({ url: server.url })
  const forgot = await anyone.run(['social', 'password', 'forgot', 'mail_cli2@example.com'])
  assert.is(forgot.code, 0, forgot.stderr)
  assert.match(forgot.stdout, /if an account matches/)
  const reset = await anyone.json(['social', 'password', 'reset', await mailedToken('mail_cli2@example.com'), '--password-stdin'], { input: 'a new password' })
  assert.is(reset.revoked_sessions, 1)
  assert.is((await me.run(['social', 'whoami'])).code, 4, 'the old session is gone')
  assert.is((await anyone.json(['social', 'login', '-e', 'mail_cli2@example.com', '--password-stdin'], { input: 'a new password' })).user.username, 'mail_cli')

  const outbox = await runCli(['admin', 'mail', '--data-dir', server.dataDir, '--json'])
  assert.is(outbox.code, 0, outbox.stderr)
  const rows = JSON.parse(outbox.stdout)
  assert.ok(rows.some((row: { to: string; kind: string; status: string }) => row.to === 'mail_cli2@example.com' && row.kind === 'password_reset' && row.status === 'sent'))
  assert.not.match(outbox.stdout, /token=|text_body|html_body/, 'no body, no link')
  const table = await runCli(['admin', 'mail', '--data-dir', server.dataDir, '--status', 'sent', '--limit', '2'])
  assert.match(table.stdout, /^ID +KIND +TO +STATUS +TRIES +CREATED +WHEN +LAST ERROR\n/)
  assert.is(table.stdout.trim().split('\n').length, 3)
})

test('social push: the key, subscribe with --alert and --policy, show, update, unsubscribe; bad flags are usage errors', async () => {
  const me = shell({ url: server.url })
  await me.json(['social', 'register', '-u', 'push_cli', '-e', 'push_cli@example.com', '--password-stdin'], { input: PASSWORD })
  const key = await me.run(['social', 'push', 'key'])
  assert.is(key.code, 0, key.stderr)
  assert.is(key.stdout.trim(), (await server.request('GET', '/api/mobile/push/vapid-key')).body.data.public_key)
  const sub = push.subscription()
  const subscribed = await me.json(['social', 'push', 'subscribe', '--endpoint', sub.endpoint, '--p256dh', sub.keys.p256dh, '--auth', sub.keys.auth, '--alert', 'like=off', '--policy', 'followed'])
  assert.equal([subscribed.endpoint, subscribed.alerts.like, subscribed.alerts.comment, subscribed.policy], [sub.endpoint, false, true, 'followed'])
  const shown = await me.run(['social', 'push'])
  assert.match(shown.stdout, /policy: followed\nalerts: .*like=off/)
  assert.is((await me.json(['social', 'push', 'update', '--alert', 'like=on'])).alerts.like, true)
  const bad = await me.run(['social', 'push', 'update', '--alert', 'like'])
  assert.is(bad.code, 2)
  assert.match(bad.stderr, /--alert takes TYPE=on or TYPE=off/)
  assert.is((await me.run(['social', 'push', 'update'])).code, 2)
  assert.is(await me.json(['social', 'push', 'unsubscribe']), null)
  const none = await me.run(['social', 'push'])
  assert.is(none.code, 1)
  assert.match(none.stderr, /no push subscription/)
})

test.run()
