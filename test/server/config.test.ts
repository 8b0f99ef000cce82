import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ConfigError, DEFAULT_RATE_LIMITS, loadConfig, parseRateLimits } from '../../src/server/config.js'

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

test.run()
