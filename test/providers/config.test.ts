/** The provider configuration: `PLAZA_<NAME>_*` shortcuts, the `services:` map of the PLAZA_LLM_CONFIG file, and clear errors. */
import { existsSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadChatConfig } from '../../src/server/chat/config.js'
import { ConfigError, loadConfig } from '../../src/server/config.js'
import { silentLogger } from '../../src/server/logger.js'
import { createServices } from '../../src/server/services.js'
import { isProviderConfigured, loadProvidersConfig } from '../../src/server/providers/config.js'
import { tempDir } from '../helpers/server.js'

const dir = tempDir()
function file(name: string, text: string): string {
  const at = path.join(dir, name)
  writeFileSync(at, text)
  return at
}

const fails = (env: NodeJS.ProcessEnv, pattern: RegExp) => {
  const error = (() => {
    try {
      loadProvidersConfig(env)
    } catch (e) {
      return e
    }
  })()
  assert.instance(error, ConfigError)
  assert.match((error as Error).message, pattern)
}

test('nothing set: only weather, on the public Open-Meteo API', () => {
  const config = loadProvidersConfig({})
  assert.equal([...config.services.keys()], ['weather'])
  const [weather] = config.services.get('weather')!
  assert.equal([weather.name, weather.protocol, weather.baseUrl, weather.options], ['default', 'open-meteo', 'https://api.open-meteo.com', { geocoding_url: 'https://geocoding-api.open-meteo.com' }])
  assert.equal(config.retry, { maxRetries: 2, baseDelayMs: 250, maxDelayMs: 10_000 })
})

test('environment shortcuts: base URL, key, protocol, model, timeout; a key alone for remove.bg', () => {
  const config = loadProvidersConfig({
    PLAZA_IMAGES_BASE_URL: 'http://127.0.0.1:7860/',
    PLAZA_IMAGES_PROTOCOL: 'AUTOMATIC1111',
    PLAZA_IMAGES_API_KEY: 'user:pass',
    PLAZA_IMAGES_MODEL: 'sd_xl_base_1.0',
    PLAZA_IMAGES_TIMEOUT_MS: '5000',
    PLAZA_REMOVEBG_API_KEY: 'rbg-1234',
  })
  const [images] = config.services.get('images')!
  assert.equal([images.protocol, images.baseUrl, images.apiKey, images.model, images.timeoutMs], ['automatic1111', 'http://127.0.0.1:7860', 'user:pass', 'sd_xl_base_1.0', 5000])
  const [removebg] = config.services.get('removebg')!
  assert.equal([removebg.protocol, removebg.baseUrl], ['removebg', 'https://api.remove.bg'])
  assert.equal(config.secrets.sort(), ['rbg-1234', 'user:pass'])
})

test('the file: ordered targets per service after the environment one, keys by variable name, models and retry read', () => {
  const config = file(
    'services.yaml',
    `
providers:
  local: { type: openai, base_url: http://127.0.0.1:11434/v1 }
models:
  default: { provider: local, model: llama3 }
retry: { max_retries: 4, max_delay_ms: 2000 }
services:
  images:
    - protocol: hf-inference
      base_url: https://router.huggingface.co/hf-inference
      api_key_env: HF_TOKEN
      models: { sdxl: stabilityai/stable-diffusion-xl-base-1.0 }
      timeout_ms: 90000
    - protocol: openai-images
      base_url: https://api.openai.com/v1
      api_key_env: OPENAI_KEY
  weather:
    - base_url: http://127.0.0.1:8081
`,
  )
  const env = { PLAZA_LLM_CONFIG: config, HF_TOKEN: 'hf_abc', OPENAI_KEY: 'sk-xyz', PLAZA_IMAGES_BASE_URL: 'http://127.0.0.1:7860', PLAZA_IMAGES_PROTOCOL: 'automatic1111' }
  const loaded = loadProvidersConfig(env)
  const images = loaded.services.get('images')!
  assert.equal(images.map((t) => [t.name, t.protocol, t.baseUrl]), [
    ['env', 'automatic1111', 'http://127.0.0.1:7860'],
    ['images.0', 'hf-inference', 'https://router.huggingface.co/hf-inference'],
    ['images.1', 'openai-images', 'https://api.openai.com/v1'],
  ])
  assert.equal([images[1].apiKey, images[1].models, images[1].timeoutMs], ['hf_abc', { sdxl: 'stabilityai/stable-diffusion-xl-base-1.0' }, 90000])
  const [weather] = loaded.services.get('weather')!
  assert.equal([weather.protocol, weather.baseUrl, weather.options.geocoding_url], ['open-meteo', 'http://127.0.0.1:8081', 'https://geocoding-api.open-meteo.com'])
  assert.equal(loaded.retry, { maxRetries: 4, baseDelayMs: 250, maxDelayMs: 2000 })
  // The chat configuration reads the same file and is not disturbed by its services.
  assert.is(loadChatConfig(env)!.routes.size + (loadChatConfig(env)!.defaultRoute ? 1 : 0), 1)
})

test('a file with only services configures no chat (and is no chat error)', () => {
  const only = file('only.yaml', 'services:\n  removebg:\n    - { protocol: rembg, base_url: "http://127.0.0.1:7000" }\n')
  assert.is(loadChatConfig({ PLAZA_LLM_CONFIG: only }), null)
  assert.equal(loadProvidersConfig({ PLAZA_LLM_CONFIG: only }).services.get('removebg')!.map((t) => t.protocol), ['rembg'])
})

test('mistakes are ConfigErrors that say what to fix', () => {
  fails({ PLAZA_IMAGES_API_KEY: 'sk-1' }, /PLAZA_IMAGES_API_KEY, _MODEL and _PROTOCOL need PLAZA_IMAGES_BASE_URL/)
  fails({ PLAZA_IMAGES_BASE_URL: 'ftp://x' }, /PLAZA_IMAGES_BASE_URL must be an http\(s\) URL/)
  fails({ PLAZA_IMAGES_BASE_URL: 'http://x', PLAZA_IMAGES_PROTOCOL: 'midjourney' }, /must be one of openai-images, automatic1111, hf-inference/)
  fails({ PLAZA_WEATHER_BASE_URL: 'http://x', PLAZA_WEATHER_TIMEOUT_MS: '1.5' }, /PLAZA_WEATHER_TIMEOUT_MS must be a whole number/)
  fails({ PLAZA_LLM_CONFIG: file('unknown.yaml', 'services:\n  music: [{ base_url: "http://x" }]\n') }, /services\.music: unknown service \(known: images, weather, removebg\b/)
  fails({ PLAZA_LLM_CONFIG: file('nokey.yaml', 'services:\n  images: [{ base_url: "http://x", api_key_env: MISSING_KEY }]\n') }, /services\.images\.0\.api_key_env names the environment variable MISSING_KEY, which is not set/)
  fails({ PLAZA_LLM_CONFIG: file('literal.yaml', 'services:\n  images: [{ base_url: "http://x", api_key: sk-literal }]\n') }, /services\.images\.0: Unrecognized key/)
  fails({ PLAZA_LLM_CONFIG: file('nobase.yaml', 'services:\n  images: [{ protocol: automatic1111 }]\n') }, /services\.images\.0\.base_url is required/)
  fails({ PLAZA_LLM_CONFIG: file('empty.yaml', 'services:\n  images: []\n') }, /services\.images: list at least one target/)
})

test('/api/list: configured by the layer for its services, by PLAZA_<NAME>_BASE_URL for the others', () => {
  assert.ok(isProviderConfigured('WEATHER', {}))
  assert.not.ok(isProviderConfigured('IMAGES', {}))
  assert.ok(isProviderConfigured('REMOVEBG', { PLAZA_REMOVEBG_API_KEY: 'k-1234' }))
  assert.ok(isProviderConfigured('IMAGES', { PLAZA_LLM_CONFIG: file('img.yaml', 'services:\n  images: [{ base_url: "http://x" }]\n') }))
  assert.ok(isProviderConfigured('SEARCH', { PLAZA_SEARCH_BASE_URL: 'http://x' }))
  // An invalid configuration leaves only the public default.
  const broken = { PLAZA_IMAGES_BASE_URL: 'http://x', PLAZA_IMAGES_PROTOCOL: 'nope' }
  assert.equal([isProviderConfigured('IMAGES', broken), isProviderConfigured('WEATHER', broken)], [false, true])
})

test('the server checks the provider configuration at start-up, before opening the database', async () => {
  const dataDir = path.join(tempDir(), 'never-created')
  const config = loadConfig({ dataDir }, { PLAZA_IMAGES_BASE_URL: 'http://127.0.0.1:7860', PLAZA_IMAGES_PROTOCOL: 'comfyui' })
  const error = await createServices(config, { eagerChat: true, logger: silentLogger }).catch((e) => e)
  assert.instance(error, ConfigError)
  assert.match(error.message, /PLAZA_IMAGES_PROTOCOL must be one of/)
  assert.not.ok(existsSync(dataDir))
})

test.run()
