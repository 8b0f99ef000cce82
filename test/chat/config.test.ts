import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { detectFamily, loadChatConfig, servedModels, targetsFor } from '../../src/server/chat/config.js'
import { ConfigError } from '../../src/server/config.js'
import { tempDir } from '../helpers/server.js'

const config = suite('chat config')
const dir = tempDir('plaza-chat-config-')

function file(name: string, text: string) {
  const full = path.join(dir, name)
  writeFileSync(full, text)
  return full
}

function fails(env: NodeJS.ProcessEnv, pattern: RegExp) {
  try {
    loadChatConfig(env)
  } catch (error) {
    assert.instance(error, ConfigError)
    assert.match((error as Error).message, pattern)
    return
  }
  assert.unreachable(`expected a ConfigError matching ${pattern}`)
}

config('nothing configured is null (every operation then answers 503)', () => {
  assert.is(loadChatConfig({}), null)
})

config('PLAZA_LLM_BASE_URL alone serves every alias and operation; PLAZA_LLM_MODEL names the upstream model', () => {
  const withModel = loadChatConfig({ PLAZA_LLM_BASE_URL: 'http://127.0.0.1:11434/v1/', PLAZA_LLM_API_KEY: 'sk-test-123', PLAZA_LLM_MODEL: 'llama3.2' })!
  for (const name of ['modelg-4o-mini', 'modelc-3-haiku-20240307', 'chaty', 'reasoning-70b']) {
    const [target] = targetsFor(withModel, name)!
    assert.is(target.model, 'llama3.2')
    assert.is(target.provider.type, 'openai')
    assert.is(target.provider.baseUrl, 'http://127.0.0.1:11434/v1')
    assert.is(target.provider.apiKey, 'sk-test-123')
  }
  assert.equal(withModel.secrets, ['sk-test-123'])

  const withoutModel = loadChatConfig({ PLAZA_LLM_BASE_URL: 'https://api.openai.com/v1' })!
  assert.is(targetsFor(withoutModel, 'o1-mini')![0].model, 'o1-mini')
  assert.is(targetsFor(withoutModel, 'o1-mini')![0].family, 'o1')
  assert.is(targetsFor(withoutModel, 'chaty')![0].model, 'chaty')
  assert.is(targetsFor(withoutModel, 'chaty')![0].provider.extendedSampling, false, 'OpenAI itself rejects top_k')

  const anthropic = loadChatConfig({ PLAZA_LLM_BASE_URL: 'https://api.anthropic.com', PLAZA_LLM_API_KEY: 'k-ant-1234', PLAZA_LLM_MODEL: 'claude-3-5-haiku-latest' })!
  assert.is(targetsFor(anthropic, 'chaty')![0].provider.type, 'anthropic')
})

config('a YAML file maps aliases to providers with fallbacks; keys come from the variables it names', () => {
  const yaml = file(
    'chat.yaml',
    `providers:
  local:
    base_url: http://127.0.0.1:8000/v1
    timeout_ms: 5000
  claude:
    type: anthropic
    api_key_env: MY_ANTHROPIC_KEY
models:
  modelc-3-haiku-20240307:
    provider: claude
    model: claude-3-5-haiku-latest
    max_tokens: 1024
    fallbacks:
      - { provider: local, model: qwen2.5 }
  reasoning-70b: { provider: local, model: deepseek-r1-distill-llama-70b }
  default: { provider: local, model: qwen2.5 }
retry: { max_retries: 1, base_delay_ms: 100 }
`,
  )
  const loaded = loadChatConfig({ PLAZA_LLM_CONFIG: yaml, MY_ANTHROPIC_KEY: 'sk-ant-secret' })!
  const haiku = targetsFor(loaded, 'modelc-3-haiku-20240307')!
  assert.equal(haiku.map((t) => [t.provider.name, t.model]), [['claude', 'claude-3-5-haiku-latest'], ['local', 'qwen2.5']])
  assert.is(haiku[0].provider.baseUrl, 'https://api.anthropic.com')
  assert.is(haiku[0].provider.apiKey, 'sk-ant-secret')
  assert.is(haiku[0].defaultMaxTokens, 1024)
  assert.is(haiku[1].provider.timeoutMs, 5000)
  assert.is(targetsFor(loaded, 'modelx-2')![0].model, 'qwen2.5', 'unlisted aliases use default')
  assert.equal(loaded.retry, { maxRetries: 1, baseDelayMs: 100, maxDelayMs: 10_000 })
  assert.equal(loaded.secrets, ['sk-ant-secret'])
})

config('a JSON file works too, beside the PLAZA_LLM_BASE_URL provider (named env)', () => {
  const json = file('chat.json', JSON.stringify({ models: { chaty: { provider: 'env', model: 'small' } } }))
  const loaded = loadChatConfig({ PLAZA_LLM_CONFIG: json, PLAZA_LLM_BASE_URL: 'http://127.0.0.1:9/v1', PLAZA_LLM_MODEL: 'big' })!
  assert.is(targetsFor(loaded, 'chaty')![0].model, 'small')
  assert.is(targetsFor(loaded, 'reasoning-70b')![0].model, 'big')
})

config('mistakes fail at start-up with a message that says what to fix', () => {
  fails({ PLAZA_LLM_BASE_URL: 'localhost:8000' }, /PLAZA_LLM_BASE_URL must be an http\(s\) URL/)
  fails({ PLAZA_LLM_API_KEY: 'sk-x' }, /need PLAZA_LLM_BASE_URL/)
  fails({ PLAZA_LLM_BASE_URL: 'http://x/v1', PLAZA_LLM_TIMEOUT_MS: 'soon' }, /PLAZA_LLM_TIMEOUT_MS/)
  fails({ PLAZA_LLM_CONFIG: path.join(dir, 'missing.yaml') }, /cannot read PLAZA_LLM_CONFIG file .*ENOENT/)
  fails({ PLAZA_LLM_CONFIG: file('bad.yaml', 'providers: [unclosed') }, /not valid YAML/)
  fails({ PLAZA_LLM_CONFIG: file('think.yaml', 'providers: {p: {base_url: "http://x/v1"}}\nmodels: {r1: {provider: p, model: m, think: maybe}}') }, /models\.r1\.think/)
  fails({ PLAZA_LLM_CONFIG: file('prov.yaml', 'models: {chaty: {provider: nowhere, model: m}}') }, /models\.chaty\.provider names "nowhere", which is not a configured provider/)
  fails({ PLAZA_LLM_CONFIG: file('key.yaml', 'providers: {p: {base_url: "http://x/v1", api_key_env: NOT_SET_ANYWHERE}}\nmodels: {chaty: {provider: p, model: m}}') }, /NOT_SET_ANYWHERE, which is not set/)
  fails({ PLAZA_LLM_CONFIG: file('inline-key.yaml', 'providers: {p: {base_url: "http://x/v1", api_key: sk-oops}}') }, /providers\.p: .*api_key/)
  fails({ PLAZA_LLM_CONFIG: file('keyval.yaml', 'providers: {p: {base_url: "http://x/v1", api_key_env: "sk-abc-123"}}') }, /must be the name of an environment variable/)
  fails({ PLAZA_LLM_CONFIG: file('nourl.yaml', 'providers: {p: {type: openai}}\nmodels: {chaty: {provider: p, model: m}}') }, /providers\.p\.base_url is required/)
  fails({ PLAZA_LLM_CONFIG: file('empty.yaml', 'providers: {p: {base_url: "http://x/v1"}}') }, /maps no model/)
})

config('any model name can be mapped, each with its own timeout, parameters and think mode', () => {
  const loaded = loadChatConfig({
    PLAZA_LLM_CONFIG: file(
      'names.yaml',
      [
        'providers: {p: {base_url: "http://x/v1", timeout_ms: 9000}}',
        'models:',
        '  gpt-5: {provider: p, model: gpt-5-2025}',
        '  team/r1: {provider: p, model: deepseek-r1-distill-qwen-32b, timeout_ms: 120000, params: {temperature: 0.6, top_p: 0.95}}',
        '  plain: {provider: p, model: DeepSeek-R1-Distill-Llama-8B, think: tags}',
      ].join('\n'),
    ),
  })!
  const [gpt5] = targetsFor(loaded, 'gpt-5')!
  assert.equal([gpt5.model, gpt5.timeoutMs, gpt5.params, gpt5.startsInReasoning], ['gpt-5-2025', 9000, {}, false])
  const [r1] = targetsFor(loaded, 'team/r1')!
  assert.equal([r1.timeoutMs, r1.params, r1.startsInReasoning], [120000, { temperature: 0.6, top_p: 0.95 }, true], 'an R1 distill starts in its reasoning')
  assert.is(targetsFor(loaded, 'plain')![0].startsInReasoning, false, 'think: tags overrides the name')
  assert.is(targetsFor(loaded, 'modelx-2'), null, 'no default: other names are not served')
  assert.equal(servedModels(loaded).map((m) => m.id), ['gpt-5', 'team/r1', 'plain'])
  // PLAZA_LLM_BASE_URL alone serves every built-in name, the catalog's gateway aliases included.
  const env = loadChatConfig({ PLAZA_LLM_BASE_URL: 'http://x/v1' })!
  for (const name of ['modelg-4o-mini', 'chaty', 'reasoning-70b', 'copilot', 'llama-70b', 'reasoning-small', 'gpt', 'coder', 'chat']) assert.is(targetsFor(env, name)![0].model, name)
})

config('o1-style models are recognised by name', () => {
  for (const model of ['o1-preview', 'o1-mini', 'o1', 'o3-mini', 'openai/o4-mini']) assert.is(detectFamily(model), 'o1', model)
  for (const model of ['gpt-4o-mini', 'llama3.2', 'olmo-2', 'claude-3-opus']) assert.is(detectFamily(model), 'chat', model)
})

config.run()
