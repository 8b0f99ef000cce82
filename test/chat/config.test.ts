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

  // Any other name goes upstream as asked, not to PLAZA_LLM_MODEL.
  assert.is(targetsFor(withModel, 'gpt-4o-mini')![0].model, 'gpt-4o-mini')
  assert.is(targetsFor(withModel, 'qwen2.5:7b')![0].model, 'qwen2.5:7b')

  // Without PLAZA_LLM_MODEL an alias goes upstream as the model of the documented mapping, never as itself.
  const withoutModel = loadChatConfig({ PLAZA_LLM_BASE_URL: 'https://api.openai.com/v1' })!
  assert.is(targetsFor(withoutModel, 'o1-mini')![0].model, 'o1-mini')
  assert.is(targetsFor(withoutModel, 'o1-mini')![0].family, 'o1')
  assert.is(targetsFor(withoutModel, 'modelg-4o-mini')![0].model, 'gpt-4o-mini')
  assert.is(targetsFor(withoutModel, 'modelc-3-haiku-20240307')![0].model, 'claude-3-haiku-20240307')
  assert.is(targetsFor(withoutModel, 'chaty')![0].model, 'gpt-4o-mini')
  assert.is(targetsFor(withoutModel, 'reasoning-small')![0].family, 'o1')
  assert.is(targetsFor(withoutModel, 'chaty')![0].provider.extendedSampling, false, 'OpenAI itself rejects top_k')
  assert.is(targetsFor(withoutModel, 'chaty')![0].provider.responsesApi, true, "OpenAI's own API serves the Responses API")
  const gpt5 = targetsFor(withoutModel, 'gpt-5')![0]
  assert.equal([gpt5.model, gpt5.dynamic], ['gpt-5', true], 'a name passed through is not tracked for cooldown')
  assert.is(targetsFor(withoutModel, 'env/o3')![0].model, 'o3', 'the provider prefix routes too')
  assert.is(targetsFor(withoutModel, 'env/o3')![0].family, 'o1')

  const anthropic = loadChatConfig({ PLAZA_LLM_BASE_URL: 'https://api.anthropic.com', PLAZA_LLM_API_KEY: 'k-ant-1234' })!
  assert.is(targetsFor(anthropic, 'chaty')![0].provider.type, 'anthropic')
  assert.is(targetsFor(anthropic, 'modelg-4o-mini')![0].model, 'claude-3-5-haiku-20241022')
  assert.is(targetsFor(anthropic, 'claude-sonnet-4-5')![0].model, 'claude-sonnet-4-5')
})

config('several providers: provider/model prefixes, the file maps any name, a * default passes names on', () => {
  const yaml = file(
    'several.yaml',
    `providers:
  openai: { base_url: "https://api.openai.com/v1" }
  router: { base_url: "https://openrouter.ai/api/v1", responses_api: true }
  claude: { type: anthropic }
models:
  fast: { provider: openai, model: gpt-4o-mini }
prices:
  openai/gpt-4o-mini: { input: 1, output: 2 }
  house-model: { input: 0.5, output: 0.5, cached_input: 0.1 }
`,
  )
  const loaded = loadChatConfig({ PLAZA_LLM_CONFIG: yaml })!
  assert.equal(targetsFor(loaded, 'fast')!.map((t) => [t.provider.name, t.model]), [['openai', 'gpt-4o-mini']])
  assert.equal(targetsFor(loaded, 'router/openai/gpt-4o-mini')!.map((t) => [t.provider.name, t.model]), [['router', 'openai/gpt-4o-mini']], 'split at the first slash')
  assert.equal(targetsFor(loaded, 'claude/claude-3-7-sonnet-latest')!.map((t) => [t.provider.name, t.provider.type, t.model]), [['claude', 'anthropic', 'claude-3-7-sonnet-latest']])
  assert.is(targetsFor(loaded, 'gpt-4o'), null, 'several providers and no default: a bare name that nothing maps is not served')
  assert.is(targetsFor(loaded, 'nowhere/gpt-4o'), null)
  assert.is(targetsFor(loaded, 'modelg-4o-mini'), null, 'nothing serves the aliases either: no default, no PLAZA_LLM_BASE_URL')
  assert.is(targetsFor(loaded, 'router/x')![0].provider.responsesApi, true)
  // Prices: the file's, by provider/model or model, over the built-in list prices.
  assert.equal(loaded.prices.of('openai', 'gpt-4o-mini'), { input: 1, output: 2, cachedInput: undefined })
  assert.equal(loaded.prices.of('router', 'gpt-4o-mini-2024-07-18'), { input: 0.15, output: 0.6, cachedInput: 0.075 })
  assert.is(loaded.prices.cost('local', 'house-model', { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100, prompt_tokens_details: { cached_tokens: 400 } }), 600 * 500 + 400 * 100 + 100 * 500)

  const wildcard = loadChatConfig({
    PLAZA_LLM_CONFIG: file('star.yaml', `providers:\n  a: { base_url: "http://a/v1" }\n  b: { base_url: "http://b/v1" }\nmodels:\n  default: { provider: a, model: "*", fallbacks: [{ provider: b, model: "*" }] }\n`),
  })!
  assert.equal(targetsFor(wildcard, 'qwen3')!.map((t) => [t.provider.name, t.model, t.dynamic]), [['a', 'qwen3', true], ['b', 'qwen3', true]])
  assert.equal(targetsFor(wildcard, 'modelg-4o-mini')!.map((t) => [t.provider.name, t.model]), [['a', 'gpt-4o-mini'], ['b', 'gpt-4o-mini']], 'aliases still go as a name the provider knows')
  fails({ PLAZA_LLM_CONFIG: file('star-bad.yaml', 'providers: {p: {base_url: "http://x/v1"}}\nmodels: {fast: {provider: p, model: "*"}}') }, /models\.fast\.model is "\*", which only the default route takes/)
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
  assert.is(targetsFor(loaded, 'anything-else')![0].model, 'anything-else')
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
  fails({ PLAZA_LLM_CONFIG: file('price.yaml', 'providers: {p: {base_url: "http://x/v1"}}\nprices: {m: {input: -1, output: 1}}') }, /prices\.m\.input/)
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
  // A file serves the names it maps, provider/model prefixes and its default: nothing else, even with one provider.
  assert.is(targetsFor(loaded, 'modelx-2'), null, 'no default: other names are not served')
  assert.is(targetsFor(loaded, 'qwen3:8b'), null)
  assert.is(targetsFor(loaded, 'p/qwen3:8b')![0].model, 'qwen3:8b')
  assert.equal(servedModels(loaded).map((m) => m.id), ['gpt-5', 'team/r1', 'plain'])
  // PLAZA_LLM_BASE_URL alone serves every built-in name, the catalog's gateway aliases included, each as a real model.
  const env = loadChatConfig({ PLAZA_LLM_BASE_URL: 'http://x/v1' })!
  for (const name of ['modelg-4o-mini', 'chaty', 'reasoning-70b', 'copilot', 'llama-70b', 'reasoning-small', 'gpt', 'coder', 'chat', 'online']) {
    const [target] = targetsFor(env, name)!
    assert.ok(target.model !== name && target.model.length > 0, name)
  }
  assert.is(targetsFor(env, 'reasoning-70b')![0].startsInReasoning, true, 'the R1 distill it maps to starts in its reasoning')
})

config('o1-style models are recognised by name', () => {
  for (const model of ['o1-preview', 'o1-mini', 'o1', 'o3-mini', 'openai/o4-mini']) assert.is(detectFamily(model), 'o1', model)
  for (const model of ['gpt-4o-mini', 'llama3.2', 'olmo-2', 'claude-3-opus']) assert.is(detectFamily(model), 'chat', model)
})

config.run()
