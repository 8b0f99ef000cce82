/**
 * OpenAI's embeddings, moderations, speech and transcriptions through Plaza, driven by OpenAI's
 * own npm client against loopback providers speaking those protocols (fake-upstream.ts): the
 * gateway's keys, retries and fallbacks apply to them as to chat.
 */
import { statSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import OpenAI, { toFile } from 'openai'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { TRANSCRIPTION_FILE_LIMIT } from '../../src/server/chat/surfaces/audio.js'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { json, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'
import { providerFile } from './helpers.js'

type Ctx = { server: TestServer; first: FakeUpstream; second: FakeUpstream; openai: OpenAI }

const endpoints = suite<Ctx>('gateway endpoints: embeddings, moderations, speech, transcriptions')

endpoints.before(async (ctx) => {
  ctx.first = await startFakeUpstream()
  ctx.second = await startFakeUpstream()
  const file = providerFile(`
providers:
  main: { base_url: "${ctx.first.url}/v1", api_key_env: FAKE_MAIN_KEY }
  spare: { base_url: "${ctx.second.url}/v1" }
  claude: { type: anthropic, base_url: "${ctx.second.url}" }
models:
  embed: { provider: main, model: text-embedding-3-small, fallbacks: [{ provider: spare, model: local-embedder }] }
  claude-only: { provider: claude, model: claude-3-5-haiku-20241022 }
  default: { provider: main, model: "*" }
retry: { max_retries: 1, base_delay_ms: 1, max_delay_ms: 5 }
`)
  ctx.server = await startTestServer({ env: { PLAZA_LLM_CONFIG: file, FAKE_MAIN_KEY: 'sk-main-endpoints-1' } })
  ctx.openai = new OpenAI({ baseURL: `${ctx.server.url}/api/v1`, apiKey: 'unused', maxRetries: 0 })
})
endpoints.after(async (ctx) => {
  await ctx.server.close()
  await ctx.first.close()
  await ctx.second.close()
})

endpoints('embeddings: any name goes up as asked, a mapped name as its model; the answer names the model asked for', async ({ openai, first }) => {
  const result = await openai.embeddings.create({ model: 'text-embedding-3-large', input: ['hello world', 'plaza'], dimensions: 4 })
  assert.is(result.object, 'list')
  assert.is(result.data.length, 2)
  assert.is(result.data[0].embedding.length, 4)
  assert.is(result.model, 'text-embedding-3-large')
  assert.equal(result.usage, { prompt_tokens: 3, total_tokens: 3 })
  const sent = first.requests.at(-1)!
  assert.equal([sent.path, sent.headers.authorization, sent.body.model, sent.body.dimensions], ['/v1/embeddings', 'Bearer sk-main-endpoints-1', 'text-embedding-3-large', 4])

  await openai.embeddings.create({ model: 'embed', input: 'x' })
  assert.is(first.requests.at(-1)!.body.model, 'text-embedding-3-small')
})

endpoints('embeddings: a failing provider is retried, then its fallback answers', async ({ openai, first, second }) => {
  first.enqueue(json(500, { error: { message: 'down' } }), json(500, { error: { message: 'still down' } }))
  const before = second.requests.length
  const result = await openai.embeddings.create({ model: 'embed', input: 'fallback please' })
  assert.is(result.data.length, 1)
  assert.is(second.requests.length, before + 1)
  assert.is(second.requests.at(-1)!.body.model, 'local-embedder')
})

endpoints('a model only an Anthropic provider serves is a 400 for embeddings, speech and transcriptions', async ({ openai, second }) => {
  const before = second.requests.length
  const refused = await openai.embeddings.create({ model: 'claude-only', input: 'x' }).catch((e) => e)
  assert.instance(refused, OpenAI.BadRequestError)
  assert.is(refused.param, 'model')
  assert.match(refused.message, /Anthropic provider here, which has no embeddings API/)
  assert.instance(await openai.audio.speech.create({ model: 'claude-only', input: 'x', voice: 'alloy' }).catch((e) => e), OpenAI.BadRequestError)
  assert.is(second.requests.length, before)
})

endpoints('moderations: the default model when none is named', async ({ openai, first }) => {
  const result = await openai.moderations.create({ input: 'some hate here' })
  assert.is(result.results[0].flagged, true)
  assert.is(first.requests.at(-1)!.body.model, 'omni-moderation-latest')
  assert.is(result.model, 'omni-moderation-latest')
})

endpoints('speech: the audio is streamed back as the provider sends it', async ({ openai, first }) => {
  const audio = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: 'Hello from Plaza', voice: 'alloy', response_format: 'mp3' })
  assert.is(audio.headers.get('content-type'), 'audio/mpeg')
  assert.is(Buffer.from(await audio.arrayBuffer()).toString(), 'ID3voice=alloy;Hello from Plaza')
  assert.equal([first.requests.at(-1)!.path, first.requests.at(-1)!.body.model], ['/v1/audio/speech', 'gpt-4o-mini-tts'])
  const bad = await openai.audio.speech.create({ model: 'tts-1', input: '', voice: 'alloy' }).catch((e) => e)
  assert.instance(bad, OpenAI.BadRequestError)
})

endpoints('transcriptions: the form goes on to the provider (file and fields), as JSON, text or events; nothing is left on disk', async ({ openai, first }) => {
  const bytes = Buffer.alloc(50_000, 7)
  const spooled = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('plaza-transcribe-')).length
  const leftBefore = await spooled()
  const result = await openai.audio.transcriptions.create({ file: await toFile(bytes, 'speech.mp3', { type: 'audio/mpeg' }), model: 'gpt-4o-transcribe', language: 'en' })
  assert.match(result.text, /^heard \d+ bytes for gpt-4o-transcribe$/)
  const sent = first.requests.at(-1)!
  assert.is(sent.path, '/v1/audio/transcriptions')
  assert.match(String(sent.headers['content-type']), /^multipart\/form-data; boundary=/)
  const form = sent.raw.toString('latin1')
  assert.ok(form.includes('name="language"\r\n\r\nen'), 'the other fields go on')
  assert.ok(form.includes(bytes.toString('latin1')), 'the file goes on whole')
  assert.ok(/filename="speech\.mp3"/.test(form))

  const text = await openai.audio.transcriptions.create({ file: await toFile(bytes, 'a.wav'), model: 'whisper-1', response_format: 'text' })
  assert.match(String(text), /^heard \d+ bytes for whisper-1$/)

  const events: string[] = []
  for await (const event of await openai.audio.transcriptions.create({ file: await toFile(bytes, 'a.wav'), model: 'gpt-4o-transcribe', stream: true })) events.push(event.type)
  assert.equal(events, ['transcript.text.delta', 'transcript.text.delta', 'transcript.text.done'])
  assert.is(await spooled(), leftBefore, 'the spooled file is deleted')
})

endpoints('transcriptions: a form without a file or a model, or a file past the limit, is refused', async ({ server, first }) => {
  const before = first.requests.length
  const noFile = new FormData()
  noFile.append('model', 'whisper-1')
  const missing = await server.request('POST', '/api/v1/audio/transcriptions', { raw: noFile })
  assert.is(missing.status, 400)
  assert.match(missing.body.error.message, /No file was sent/)
  const noModel = new FormData()
  noModel.append('file', new Blob([Buffer.from('RIFF')]), 'a.wav')
  const unnamed = await server.request('POST', '/api/v1/audio/transcriptions', { raw: noModel })
  assert.is(unnamed.status, 400)
  assert.is(unnamed.body.error.param, 'model')
  const huge = new FormData()
  huge.append('model', 'whisper-1')
  huge.append('file', new Blob([Buffer.alloc(TRANSCRIPTION_FILE_LIMIT + 1)]), 'big.wav')
  const tooBig = await server.request('POST', '/api/v1/audio/transcriptions', { raw: huge })
  assert.is(tooBig.status, 413)
  assert.is(first.requests.length, before)
  assert.ok(statSync(tmpdir()).isDirectory())
})

endpoints.run()
