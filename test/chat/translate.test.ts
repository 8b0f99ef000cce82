import { Agent } from 'undici'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { ProviderConfig, Target } from '../../src/server/chat/config.js'
import { anthropicBody } from '../../src/server/chat/providers/anthropic.js'
import { foldSystemMessages, openaiBody } from '../../src/server/chat/providers/openai.js'
import type { UpstreamCall } from '../../src/server/chat/providers/types.js'
import type { ChatMessage, ChatParams } from '../../src/shared/schemas/chat.js'

const translate = suite('chat translation')

const provider = (over: Partial<ProviderConfig> = {}): ProviderConfig => ({
  name: 'p', type: 'openai', baseUrl: 'http://x/v1', timeoutMs: 1000, extendedSampling: true, headers: {}, anthropicVersion: '2023-06-01', responsesApi: false, ...over,
})
const call = (target: Partial<Target>, messages: ChatMessage[], params: ChatParams): UpstreamCall => ({
  target: { provider: provider(), model: 'm', family: 'chat', defaultMaxTokens: 4096, timeoutMs: 1000, params: {}, startsInReasoning: false, ...target },
  messages,
  params,
  signal: new AbortController().signal,
  dispatcher: new Agent(),
})

const conversation: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello' },
  { role: 'user', content: 'Why?' },
]
const everything: ChatParams = { max_tokens: 50, temperature: 1.5, top_p: 0.9, top_k: 40, repetition_penalty: 1.1, stop: ['\n\n'] }

translate('OpenAI-compatible chat models get every field they take', () => {
  const body = openaiBody(call({}, conversation, everything), true)
  assert.equal(body, {
    model: 'm', messages: conversation, max_tokens: 50, temperature: 1.5, top_p: 0.9, stop: ['\n\n'], top_k: 40, repetition_penalty: 1.1,
    stream: true, stream_options: { include_usage: true },
  })
  const strict = openaiBody(call({ provider: provider({ extendedSampling: false }) }, conversation, everything), false)
  assert.not.ok('top_k' in strict || 'repetition_penalty' in strict, 'providers that reject them never see top_k or repetition_penalty')
  assert.not.ok('stream' in strict)
})

translate('o1-style models: max_completion_tokens, no system role (folded into the first user message), no sampling knobs', () => {
  const body = openaiBody(call({ family: 'o1', model: 'o1-mini' }, conversation, everything), false)
  assert.equal(body, {
    model: 'o1-mini',
    messages: [{ role: 'user', content: 'Be brief.\n\nHi' }, { role: 'assistant', content: 'Hello' }, { role: 'user', content: 'Why?' }],
    max_completion_tokens: 50,
  })
  assert.equal(foldSystemMessages([{ role: 'system', content: 'S' }, { role: 'assistant', content: 'A' }]), [{ role: 'user', content: 'S' }, { role: 'assistant', content: 'A' }])
})

translate('Anthropic: system at top level, max_tokens always, stop_sequences, temperature within 0..1, top_k kept, repetition_penalty dropped', () => {
  const body = anthropicBody(call({ provider: provider({ type: 'anthropic' }) }, conversation, everything), true)
  assert.equal(body, {
    model: 'm', max_tokens: 50, system: 'Be brief.',
    messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }, { role: 'user', content: 'Why?' }],
    temperature: 1, top_p: 0.9, top_k: 40, stop_sequences: ['\n\n'], stream: true,
  })
  const minimal = anthropicBody(call({ provider: provider({ type: 'anthropic' }), defaultMaxTokens: 1024 }, [{ role: 'user', content: 'Hi' }], {}), false)
  assert.equal(minimal, { model: 'm', max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }] })
})

translate.run()
