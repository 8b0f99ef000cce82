/** listOperations, the pure function behind `GET /api/list` and `plaza util list`: rows, environment and gateway state in, the list out. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { listOperations } from '../../src/server/catalog/listing.js'
import { defineOperation } from '../../src/server/catalog/registry.js'

const handle = async () => {}
const rows = [
  defineOperation({ group: 'Tools', method: 'POST', path: '/api/run', summary: 'local, served', backend: 'local', providers: ['PISTON'], handle }),
  defineOperation({ group: 'Weather', method: 'GET', path: '/api/sky', summary: 'keyless default', backend: 'provider', providers: ['GEOCODING'] }),
  defineOperation({ group: 'Audio', method: 'GET', path: '/api/say', summary: 'either provider', backend: 'provider', providers: ['SPEECH', 'POLLY'], handle }),
  defineOperation({ group: 'AI', method: 'POST', path: '/api/ask', summary: 'gateway', backend: 'gateway' }),
  defineOperation({ group: 'LLM', method: 'POST', path: '/api/second', summary: 'gateway with its own upstream', backend: 'gateway', providers: ['INFERENCE'] }),
  defineOperation({ group: 'NSFW', method: null, path: null, summary: 'never', backend: 'provider', notOffered: 'no' }),
]
const flags = (env: NodeJS.ProcessEnv, gatewayConfigured: boolean) => listOperations(rows, { env, gatewayConfigured }).map((entry) => [entry.path, entry.offered, entry.configured, entry.reason])

test('offered, configured and reason of each kind of row', () => {
  assert.equal(flags({}, false), [
    ['/api/run', true, true, undefined],
    ['/api/sky', false, true, 'not built yet'],
    ['/api/say', true, false, undefined],
    ['/api/ask', false, false, 'not built yet'],
    ['/api/second', false, false, 'not built yet'],
    [null, false, false, 'no'],
  ])
  assert.equal(
    flags({ PLAZA_POLLY_REGION: 'eu-west-1', PLAZA_POLLY_ACCESS_KEY_ID: 'AKID', PLAZA_POLLY_SECRET_ACCESS_KEY: 'secret', PLAZA_INFERENCE_BASE_URL: 'http://127.0.0.1:8000/v1' }, true).map((row) => row[2]),
    [true, true, true, true, true, false],
  )
  // The gateway alone does not configure a row whose upstream is its own provider, and a blank value is not set.
  assert.equal(flags({ PLAZA_INFERENCE_BASE_URL: ' ', PLAZA_SPEECH_BASE_URL: '' }, true).map((row) => row[2]), [true, true, false, true, false, false])
})

test('filters keep registry order; an entry has reason only when not offered', () => {
  const offered = listOperations(rows, { env: {}, gatewayConfigured: false }, { offered: true })
  assert.equal(offered.map((entry) => entry.path), ['/api/run', '/api/say'])
  assert.not.ok(offered.some((entry) => 'reason' in entry))
  assert.equal(listOperations(rows, { env: {}, gatewayConfigured: false }, { group: 'Audio', offered: false }), [])
  assert.equal(listOperations(rows, { env: {}, gatewayConfigured: false }, { group: 'NSFW' }).map((entry) => entry.summary), ['never'])
})

test('WEATHER and GEOCODING default to Open-Meteo; other providers need their base URL, a key alone is not enough', () => {
  const provider = (name: string) => defineOperation({ group: 'Weather', method: 'GET', path: `/api/${name}`, summary: name, backend: 'provider', providers: [name] })
  const configured = (env: NodeJS.ProcessEnv) => listOperations(['WEATHER', 'GEOCODING', 'IMAGES'].map(provider), { env, gatewayConfigured: true }).map((entry) => entry.configured)
  assert.equal(configured({}), [true, true, false])
  assert.equal(configured({ PLAZA_IMAGES_API_KEY: 'sk-only-a-key' }), [true, true, false])
  assert.equal(configured({ PLAZA_IMAGES_BASE_URL: 'http://127.0.0.1:7860' }), [true, true, true])
})

test('a local row with an optional package: configured when it resolves (the package, or the override path), else `missing` says what to install', () => {
  const pkg = { name: '@echogarden/espeak-ng-emscripten', override: 'PLAZA_TEST_SPEAK_MODULE' }
  const row = defineOperation({ group: 'Audio', method: 'GET', path: '/api/speak', summary: 'optional', backend: 'local', handle, optionalPackage: pkg })
  const [installed] = listOperations([row], { env: {}, gatewayConfigured: false })
  assert.is(installed.configured, true)
  assert.not.ok('missing' in installed)
  const [absent] = listOperations([row], { env: { PLAZA_TEST_SPEAK_MODULE: '/nonexistent/espeak-ng.js' }, gatewayConfigured: false })
  assert.is(absent.configured, false)
  assert.is(absent.missing, 'optional package not installed: npm install @echogarden/espeak-ng-emscripten')
  const [notAPackage] = listOperations([defineOperation({ ...row, optionalPackage: { name: '@plaza-test/no-such-package', override: 'PLAZA_TEST_UNSET' } })], { env: {}, gatewayConfigured: false })
  assert.equal([notAPackage.configured, notAPackage.missing], [false, 'optional package not installed: npm install @plaza-test/no-such-package'])
})

test.run()
