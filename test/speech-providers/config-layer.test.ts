/**
 * The speech services' configuration (`PLAZA_SPEECH_*`, `PLAZA_ELEVENLABS_*`, `PLAZA_POLLY_*`,
 * `PLAZA_AZURE_SPEECH_*` and the file's `services:` entries) and the protocols on the layer alone:
 * Retry-After waited exactly (the sleep injected and recorded), the streamed body's byte bound.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ConfigError } from '../../src/server/config.js'
import { isProviderConfigured, loadProvidersConfig } from '../../src/server/providers/config.js'
import { UpstreamError } from '../../src/server/providers/errors.js'
import { requestUpstream } from '../../src/server/providers/http.js'
import { createProviderLayer } from '../../src/server/providers/layer.js'
import { audioChunks, azureSsml, speak } from '../../src/server/providers/speech.js'
import { openaiSpeechInput } from '../../src/shared/schemas/speech-providers.js'
import { bytes, fakeAudio, json, startFakeProviders, type FakeProviders } from '../providers/fake-providers.js'
import { tempDir } from '../helpers/server.js'

let fake: FakeProviders
test.before(async () => void (fake = await startFakeProviders()))
test.after(() => fake.close())
test.before.each(() => void (fake.requests.length = 0))

const fails = (env: NodeJS.ProcessEnv, pattern: RegExp) => {
  try {
    loadProvidersConfig(env)
  } catch (error) {
    assert.instance(error, ConfigError)
    assert.match((error as Error).message, pattern)
    return
  }
  assert.unreachable(`accepted: ${JSON.stringify(env)}`)
}

test('environment: an ElevenLabs key alone means its API; a region alone gives Polly and Azure their endpoints', () => {
  const config = loadProvidersConfig({
    PLAZA_ELEVENLABS_API_KEY: 'xi-1',
    PLAZA_POLLY_REGION: 'eu-central-1',
    PLAZA_POLLY_ACCESS_KEY_ID: 'AKID1',
    PLAZA_POLLY_SECRET_ACCESS_KEY: 'polly-secret',
    PLAZA_POLLY_MODEL: 'neural',
    PLAZA_AZURE_SPEECH_REGION: 'westeurope',
    PLAZA_AZURE_SPEECH_API_KEY: 'az-1',
    PLAZA_SPEECH_BASE_URL: 'http://127.0.0.1:8880/v1/',
    PLAZA_SPEECH_MODEL: 'kokoro',
  })
  const one = (service: 'speech' | 'elevenlabs' | 'polly' | 'azure_speech') => config.services.get(service)![0]
  assert.equal([one('elevenlabs').protocol, one('elevenlabs').baseUrl, one('elevenlabs').apiKey], ['elevenlabs', 'https://api.elevenlabs.io', 'xi-1'])
  assert.equal([one('polly').baseUrl, one('polly').options, one('polly').accessKeyId, one('polly').apiKey, one('polly').model], ['https://polly.eu-central-1.amazonaws.com', { region: 'eu-central-1' }, 'AKID1', 'polly-secret', 'neural'])
  assert.equal([one('azure_speech').protocol, one('azure_speech').baseUrl, one('azure_speech').apiKey], ['azure-speech', 'https://westeurope.tts.speech.microsoft.com', 'az-1'])
  assert.equal([one('speech').protocol, one('speech').baseUrl, one('speech').model], ['openai-speech', 'http://127.0.0.1:8880/v1', 'kokoro'])
  // Every key and Polly's key id are scrubbed from what leaves Plaza.
  assert.equal(config.secrets.sort(), ['AKID1', 'az-1', 'polly-secret', 'xi-1'])
  // The region of an AWS endpoint's host is Polly's signing region.
  const fromHost = loadProvidersConfig({ PLAZA_POLLY_BASE_URL: 'https://polly.us-west-2.amazonaws.com', PLAZA_POLLY_ACCESS_KEY_ID: 'A', PLAZA_POLLY_SECRET_ACCESS_KEY: 'S' })
  assert.equal(fromHost.services.get('polly')![0].options, { region: 'us-west-2' })
  // The local speech pool's own variables configure no provider.
  assert.not.ok(loadProvidersConfig({ PLAZA_SPEECH_CONCURRENCY: '2', PLAZA_SPEECH_QUEUE: '4' }).services.has('speech'))
})

test('environment mistakes stop start-up with what to set', () => {
  fails({ PLAZA_POLLY_REGION: 'eu-west-1' }, /Amazon Polly signs every request: set PLAZA_POLLY_ACCESS_KEY_ID and PLAZA_POLLY_SECRET_ACCESS_KEY/)
  fails({ PLAZA_POLLY_BASE_URL: 'http://127.0.0.1:9000', PLAZA_POLLY_ACCESS_KEY_ID: 'A', PLAZA_POLLY_SECRET_ACCESS_KEY: 'S' }, /needs a region to sign requests with/)
  fails({ PLAZA_POLLY_SECRET_ACCESS_KEY: 'S' }, /PLAZA_POLLY_SECRET_ACCESS_KEY, _MODEL and _PROTOCOL need PLAZA_POLLY_BASE_URL or PLAZA_POLLY_REGION/)
  fails({ PLAZA_AZURE_SPEECH_REGION: 'West Europe' }, /PLAZA_AZURE_SPEECH_REGION must be a region name/)
  fails({ PLAZA_AZURE_SPEECH_API_KEY: 'k' }, /need PLAZA_AZURE_SPEECH_BASE_URL or PLAZA_AZURE_SPEECH_REGION/)
  fails({ PLAZA_AZURE_SPEECH_REGION: 'westeurope' }, /PLAZA_AZURE_SPEECH_REGION needs PLAZA_AZURE_SPEECH_API_KEY/)
  fails({ PLAZA_SPEECH_API_KEY: 'k' }, /need PLAZA_SPEECH_BASE_URL/)
  fails({ PLAZA_SPEECH_BASE_URL: 'http://x', PLAZA_SPEECH_PROTOCOL: 'kokoro' }, /must be one of openai-speech for speech/)
})

test('the file: region and access_key_id_env for Polly, region for Azure, fallbacks in order; fields of other services refused', () => {
  const dir = tempDir()
  const file = path.join(dir, 'speech.yaml')
  writeFileSync(
    file,
    `
services:
  polly:
    - region: us-east-1
      access_key_id_env: AWS_KEY_ID
      api_key_env: AWS_SECRET
      model: neural
  azure_speech:
    - region: swedencentral
      api_key_env: AZURE_KEY
    - base_url: http://127.0.0.1:5000
  elevenlabs:
    - api_key_env: XI_KEY
`,
  )
  const config = loadProvidersConfig({ PLAZA_LLM_CONFIG: file, AWS_KEY_ID: 'AKIDFILE', AWS_SECRET: 'file-secret', AZURE_KEY: 'az-file', XI_KEY: 'xi-file' })
  const [polly] = config.services.get('polly')!
  assert.equal([polly.name, polly.baseUrl, polly.options.region, polly.accessKeyId, polly.apiKey, polly.model], ['polly.0', 'https://polly.us-east-1.amazonaws.com', 'us-east-1', 'AKIDFILE', 'file-secret', 'neural'])
  assert.equal(config.services.get('azure_speech')!.map((t) => [t.name, t.baseUrl, t.apiKey]), [
    ['azure_speech.0', 'https://swedencentral.tts.speech.microsoft.com', 'az-file'],
    ['azure_speech.1', 'http://127.0.0.1:5000', undefined],
  ])
  assert.is(config.services.get('elevenlabs')![0].baseUrl, 'https://api.elevenlabs.io')

  const bad = (name: string, text: string, pattern: RegExp, env: NodeJS.ProcessEnv = {}) => {
    const at = path.join(dir, name)
    writeFileSync(at, text)
    fails({ PLAZA_LLM_CONFIG: at, ...env }, pattern)
  }
  bad('a.yaml', 'services:\n  polly:\n    - region: us-east-1\n      api_key_env: AWS_SECRET\n', /services.polly.0: Amazon Polly signs every request/, { AWS_SECRET: 's' })
  bad('b.yaml', 'services:\n  speech:\n    - base_url: http://x\n      region: us-east-1\n', /services.speech.0.region is not a setting of speech/)
  bad('c.yaml', 'services:\n  azure_speech:\n    - base_url: http://x\n      access_key_id_env: K\n', /access_key_id_env is not a setting of azure_speech/)
  bad('d.yaml', 'services:\n  polly:\n    - region: us-east-1\n      access_key_id_env: NOPE\n      api_key_env: AWS_SECRET\n', /NOPE, which is not set/, { AWS_SECRET: 's' })
  bad('f.yaml', 'services:\n  azure_speech:\n    - region: westeurope\n', /services.azure_speech.0: a region needs api_key_env/)
  bad('e.yaml', 'services:\n  azure_speech:\n    - api_key_env: AZURE_KEY\n', /services.azure_speech.0.base_url is required \(or region\)/, { AZURE_KEY: 'k' })
})

test('isProviderConfigured reads the registry names of the speech rows', () => {
  assert.ok(isProviderConfigured('AZURE_SPEECH', { PLAZA_AZURE_SPEECH_REGION: 'westeurope', PLAZA_AZURE_SPEECH_API_KEY: 'k' }))
  assert.ok(isProviderConfigured('ELEVENLABS', { PLAZA_ELEVENLABS_API_KEY: 'k' }))
  assert.not.ok(isProviderConfigured('POLLY', { PLAZA_POLLY_BASE_URL: 'https://polly.example' }))
  assert.not.ok(isProviderConfigured('SPEECH', {}))
})

test('the layer: a 429 Retry-After is waited exactly (sleep injected), then the audio streams in order', async () => {
  const sleeps: number[] = []
  const layer = createProviderLayer(loadProvidersConfig({ PLAZA_SPEECH_BASE_URL: `${fake.url}/v1` }), { sleep: async (ms) => void sleeps.push(ms), random: () => 1 })
  try {
    fake.enqueue(json(429, { error: { message: 'slow down' } }, { 'retry-after': '2' }))
    const { audio, target } = await speak(layer, { engine: 'openai', ...openaiSpeechInput.parse({ text: 'wait for it', voice: 'echo' }) })
    assert.is(target.name, 'env')
    const parts: Buffer[] = []
    for await (const chunk of audioChunks(audio)) parts.push(chunk)
    assert.equal(Buffer.concat(parts), fakeAudio('mp3', 'openai:tts-1:echo:wait for it'))
    assert.equal(sleeps, [2000])
    assert.is(fake.requests.length, 2)
  } finally {
    await layer.close()
  }
})

test('the streamed body is bounded: past its limit the read fails instead of going on', async () => {
  const { Agent } = await import('undici')
  const dispatcher = new Agent()
  try {
    fake.enqueue(bytes(200, Buffer.alloc(64 * 1024, 1), 'audio/mpeg'))
    const response = await requestUpstream({ url: `${fake.url}/big`, headers: {}, timeoutMs: 5000, signal: new AbortController().signal, dispatcher, label: 'test upstream' })
    let read = 0
    const error = await (async () => {
      try {
        for await (const chunk of response.chunks(16 * 1024)) read += chunk.length
      } catch (e) {
        return e
      }
    })()
    assert.instance(error, UpstreamError)
    assert.match((error as Error).message, /test upstream answered more than 1 MiB/)
    assert.ok(read <= 16 * 1024)
  } finally {
    await dispatcher.close()
  }
})

test('SSML: every XML special character escaped in the text and the voice; the locale is the voice name up to its last dash', () => {
  assert.is(
    azureSsml(`a<b>&"c"'d'`, 'sr-Latn-RS-NicholasNeural'),
    '<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="sr-Latn-RS"><voice name="sr-Latn-RS-NicholasNeural">a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;</voice></speak>',
  )
})

test.run()
