/** PLAZA_MEDIA_TIMEOUT: read once at start-up, in milliseconds or with a unit, within the fetch guard's own limit. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ConfigError, loadConfig, parseMediaTimeout } from '../../src/server/config.js'

test('default 8 s; milliseconds or a unit; out of range or unreadable stops the start-up', () => {
  assert.is(loadConfig({}, {}).mediaTimeoutMs, 8000)
  assert.is(loadConfig({}, { PLAZA_MEDIA_TIMEOUT: '2500' }).mediaTimeoutMs, 2500)
  assert.is(parseMediaTimeout('3s'), 3000)
  for (const bad of ['50', '11s', 'soon']) assert.throws(() => parseMediaTimeout(bad), (error: unknown) => error instanceof ConfigError && /PLAZA_MEDIA_TIMEOUT/.test((error as Error).message))
})

test.run()
