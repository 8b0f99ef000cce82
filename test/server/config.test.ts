import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ConfigError, DEFAULT_RATE_LIMITS, loadConfig, parseRateLimits } from '../../src/server/config.js'
import { generateVapidKeys } from '../../src/server/delivery/vapid.js'

test('defaults need no set-up: 127.0.0.1:8080 and ./.plaza', () => {
  const config = loadConfig({}, {})
  assert.is(config.host, '127.0.0.1')
  assert.is(config.port, 8080)
  assert.is(config.dataDir, `${process.cwd()}/.plaza`)
  assert.equal(config.rateLimits, DEFAULT_RATE_LIMITS)
})

test('flags win over PLAZA_* variables, which win over defaults', () => {
  const env = { PLAZA_PORT: '9000', PLAZA_HOST: '0.0.0.0', PLAZA_DATA_DIR: '/tmp/envdir' }
  const fromEnv = loadConfig({}, env)
  assert.is(fromEnv.port, 9000)
  assert.is(fromEnv.host, '0.0.0.0')
  assert.is(fromEnv.dataDir, '/tmp/envdir')
  const fromFlags = loadConfig({ port: 7000, host: '::1', dataDir: '/tmp/flagdir' }, env)
  assert.is(fromFlags.port, 7000)
  assert.is(fromFlags.host, '::1')
  assert.is(fromFlags.dataDir, '/tmp/flagdir')
})

test('PLAZA_CODEIMAGE_WARM: render workers start with the server unless it is off; anything else is refused', () => {
  assert.is(loadConfig({}, {}).codeimageWarm, true)
  assert.is(loadConfig({}, { PLAZA_CODEIMAGE_WARM: '' }).codeimageWarm, true)
  assert.is(loadConfig({}, { PLAZA_CODEIMAGE_WARM: 'off' }).codeimageWarm, false)
  assert.is(loadConfig({}, { PLAZA_CODEIMAGE_WARM: 'No' }).codeimageWarm, false)
  assert.is(loadConfig({}, { PLAZA_CODEIMAGE_WARM: 'on' }).codeimageWarm, true)
  assert.throws(() => loadConfig({}, { PLAZA_CODEIMAGE_WARM: 'later' }), (error: unknown) => error instanceof ConfigError && /PLAZA_CODEIMAGE_WARM must be on or off, not "later"/.test(error.message))
})

test('PLAZA_STOP_GRACE: 5 s unless set, bare numbers are seconds', () => {
  assert.is(loadConfig({}, {}).stopGraceMs, 5000)
  assert.is(loadConfig({}, { PLAZA_STOP_GRACE: '1' }).stopGraceMs, 1000)
  assert.is(loadConfig({}, { PLAZA_STOP_GRACE: '250ms' }).stopGraceMs, 250)
  assert.throws(() => loadConfig({}, { PLAZA_STOP_GRACE: 'soon' }), /PLAZA_STOP_GRACE: cannot read "soon"/)
})

test('rate limits can be switched off or changed', () => {
  assert.is(parseRateLimits('off'), false)
  assert.is(loadConfig({}, { PLAZA_RATE_LIMITS: 'off' }).rateLimits, false)
  assert.is(loadConfig({ rateLimits: false }, {}).rateLimits, false)
  const changed = parseRateLimits('auth=20, default=500')
  assert.ok(changed)
  assert.is(changed.auth.max, 20)
  assert.is(changed.default.max, 500)
  assert.is(changed.upload.max, DEFAULT_RATE_LIMITS.upload.max)
  assert.throws(() => parseRateLimits('auth=lots'), (error: unknown) => error instanceof ConfigError)
})

test('bad values are refused at start-up with a clear message', () => {
  assert.throws(() => loadConfig({}, { PLAZA_PORT: '99999' }), /port/)
  assert.throws(() => loadConfig({}, { PLAZA_DATABASE_URL: 'postgres://x' }), /PLAZA_DATABASE_URL/)
  assert.throws(() => loadConfig({}, { PLAZA_PUBLIC_URL: 'ftp://x' }), /PLAZA_PUBLIC_URL/)
  assert.throws(() => loadConfig({}, { PLAZA_AGENT_TIMEOUT_MS: '2 minutes' }), /PLAZA_AGENT_TIMEOUT_MS/)
  assert.is(loadConfig({}, {}).agentTimeoutMs, 120_000)
  assert.is(loadConfig({}, { PLAZA_DATABASE_URL: 'libsql://db.example.com' }).databaseUrl, 'libsql://db.example.com')
  assert.is(loadConfig({}, { PLAZA_PUBLIC_URL: 'https://plaza.example.com/' }).publicUrl, 'https://plaza.example.com')
})

test('connection settings: a cap per peer address (256) and the keep-alive timeout (5 s), checked at start-up', () => {
  const defaults = loadConfig({}, {})
  assert.is(defaults.maxConnectionsPerAddress, 256)
  assert.is(defaults.keepAliveTimeoutMs, 5_000)
  const set = loadConfig({}, { PLAZA_MAX_CONNECTIONS_PER_ADDRESS: '50', PLAZA_KEEPALIVE_TIMEOUT_MS: '65s' })
  assert.is(set.maxConnectionsPerAddress, 50)
  assert.is(set.keepAliveTimeoutMs, 65_000)
  for (const value of ['0', '-1', 'many', '2.5']) {
    assert.throws(() => loadConfig({}, { PLAZA_MAX_CONNECTIONS_PER_ADDRESS: value }), /PLAZA_MAX_CONNECTIONS_PER_ADDRESS/, value)
  }
  for (const value of ['0', '11m', 'soon']) {
    assert.throws(() => loadConfig({}, { PLAZA_KEEPALIVE_TIMEOUT_MS: value }), /PLAZA_KEEPALIVE_TIMEOUT_MS/, value)
  }
})

test('push and mail settings: defaults, derived values, and one clear line for each mistake (never a secret in it)', () => {
  const none = loadConfig({}, {}).delivery
  assert.equal([none.mail, none.push.vapidKeys, none.push.subject, none.push.ttlSeconds, none.pollMs, none.requireVerifiedEmail], [null, null, null, 172800, 1000, false])
  assert.is(loadConfig({}, { PLAZA_PUBLIC_URL: 'https://plaza.example' }).delivery.push.subject, 'https://plaza.example', 'an https public URL is the VAPID contact')
  const mail = { PLAZA_SMTP_URL: 'smtp://user:hunter2@mail.example:587', PLAZA_MAIL_FROM: 'Plaza <no-reply@plaza.example>', PLAZA_PUBLIC_URL: 'http://plaza.example' }
  const withMail = loadConfig({}, mail).delivery
  assert.is(withMail.mail?.from, 'Plaza <no-reply@plaza.example>')
  assert.is(withMail.push.subject, 'mailto:no-reply@plaza.example', 'else the sender address')
  assert.is(loadConfig({}, { PLAZA_VAPID_SUBJECT: 'mailto:ops@plaza.example', PLAZA_PUSH_TTL: '1h', PLAZA_DELIVERY_POLL: '250ms' }).delivery.push.ttlSeconds, 3600)
  const pair = generateVapidKeys()
  assert.equal(loadConfig({}, { PLAZA_VAPID_PUBLIC_KEY: pair.publicKey, PLAZA_VAPID_PRIVATE_KEY: pair.privateKey }).delivery.push.vapidKeys, pair)

  const other = generateVapidKeys()
  const refusals: Array<[NodeJS.ProcessEnv, RegExp]> = [
    [{ PLAZA_SMTP_URL: 'http://mail.example' }, /PLAZA_SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/],
    [{ PLAZA_SMTP_URL: 'smtp://user:hunter2@mail.example' }, /PLAZA_MAIL_FROM is not/],
    [{ PLAZA_MAIL_FROM: 'no-reply@plaza.example' }, /PLAZA_SMTP_URL is not/],
    [{ ...mail, PLAZA_MAIL_FROM: 'nobody' }, /PLAZA_MAIL_FROM must be an address/],
    [{ ...mail, PLAZA_PUBLIC_URL: '' }, /mail needs PLAZA_PUBLIC_URL/],
    [{ ...mail, PLAZA_PASSWORD_RESET_URL: 'myapp://reset' }, /must contain \{token\}/],
    [{ ...mail, PLAZA_MAIL_TEMPLATES: '/nonexistent/templates' }, /is not a directory/],
    [{ PLAZA_REQUIRE_VERIFIED_EMAIL: '1' }, /PLAZA_REQUIRE_VERIFIED_EMAIL needs mail/],
    [{ ...mail, PLAZA_REQUIRE_VERIFIED_EMAIL: 'maybe' }, /must be 1 or 0/],
    [{ PLAZA_VAPID_PUBLIC_KEY: pair.publicKey }, /go together/],
    [{ PLAZA_VAPID_PUBLIC_KEY: 'short', PLAZA_VAPID_PRIVATE_KEY: pair.privateKey }, /uncompressed P-256 public key/],
    [{ PLAZA_VAPID_PUBLIC_KEY: pair.publicKey, PLAZA_VAPID_PRIVATE_KEY: other.privateKey }, /not the public key of PLAZA_VAPID_PRIVATE_KEY/],
    [{ PLAZA_VAPID_SUBJECT: 'http://plaza.example' }, /mailto: address or an https: URL/],
    [{ PLAZA_VAPID_SUBJECT: 'mailto:root@localhost' }, /must not be at localhost/],
    [{ PLAZA_PUSH_TTL: '60d' }, /PLAZA_PUSH_TTL must be from 0 to 28 days/],
    [{ PLAZA_DELIVERY_POLL: '1ms' }, /PLAZA_DELIVERY_POLL must be from 10 ms to 60 s/],
  ]
  for (const [env, message] of refusals) {
    let thrown: unknown
    try {
      loadConfig({}, env)
    } catch (error) {
      thrown = error
    }
    assert.instance(thrown, ConfigError, JSON.stringify(env))
    assert.match(String((thrown as Error).message), message)
    for (const secret of ['hunter2', pair.privateKey, other.privateKey]) assert.not.ok(String((thrown as Error).message).includes(secret), 'no secret in the message')
  }
})

test('PLAZA_DATABASE_REPLICA: an embedded replica needs the server it syncs from, over HTTP, and a file of its own in a directory that exists', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'plaza-config-'))
  try {
    const url = { PLAZA_DATABASE_URL: 'libsql://db.example.com' }
    assert.is(loadConfig({ dataDir: dir }, { ...url, PLAZA_DATABASE_REPLICA: path.join(dir, 'replica.db') }).databaseReplica, path.join(dir, 'replica.db'))
    assert.is(loadConfig({ dataDir: dir }, url).databaseReplica, undefined)
    assert.throws(() => loadConfig({ dataDir: dir }, { PLAZA_DATABASE_REPLICA: path.join(dir, 'replica.db') }), /PLAZA_DATABASE_REPLICA needs PLAZA_DATABASE_URL/)
    assert.throws(() => loadConfig({ dataDir: dir }, { PLAZA_DATABASE_URL: 'wss://db.example.com', PLAZA_DATABASE_REPLICA: path.join(dir, 'r.db') }), /syncs over HTTP/)
    assert.throws(() => loadConfig({ dataDir: dir }, { ...url, PLAZA_DATABASE_REPLICA: path.join(dir, 'missing', 'r.db') }), /does not exist/)
    assert.throws(() => loadConfig({ dataDir: dir }, { ...url, PLAZA_DATABASE_REPLICA: dir }), /is a directory/)
    assert.throws(() => loadConfig({ dataDir: dir }, { ...url, PLAZA_DATABASE_REPLICA: path.join(dir, 'plaza.db') }), /plaza\.db/)
    assert.is(loadConfig({}, { PLAZA_DATABASE_TIMEOUT: '2s' }).databaseTimeoutMs, 2000)
    assert.is(loadConfig({}, {}).databaseTimeoutMs, 10_000)
    assert.throws(() => loadConfig({}, { PLAZA_DATABASE_TIMEOUT: 'soon' }), /PLAZA_DATABASE_TIMEOUT/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
