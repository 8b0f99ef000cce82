/**
 * GET /api/tts/openai, /api/tts/elevenlabs, /api/tts/polly and /api/tts/azure on the real server,
 * against a loopback server speaking each protocol: the request each upstream gets (headers, a
 * SigV4 signature checked by recomputing it here, escaped SSML), audio streamed on before the
 * upstream has finished, retries before the first byte only, timeouts, 5xx, malformed error
 * bodies, a cut mid-stream (the client sees an incomplete answer), keys never in answers or logs,
 * and 503 when nothing is configured.
 */
import { createHash, createHmac } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Logger } from '../../src/server/logger.js'
import { AUDIO_MAGIC, fakeAudio, hang, json, startFakeProviders, type Behaviour, type FakeProviders, type RecordedRequest } from '../providers/fake-providers.js'
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js'

const KEYS = { openai: 'sk-speech-secret-1111', eleven: 'xi-secret-2222', pollyId: 'AKIDPLAZA3333', pollySecret: 'polly/secret+4444', azure: 'az-secret-5555' }

let fake: FakeProviders
/** Every engine configured at the fake. */
let all: TestServer
/** The same with a 300 ms timeout (silences). */
let quick: TestServer
/** Nothing configured. */
let bare: TestServer
const lines: string[] = []

function recordingLogger(): Logger {
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`)
  return { error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') }
}

const envAt = (url: string): NodeJS.ProcessEnv => ({
  PLAZA_SPEECH_BASE_URL: `${url}/v1`,
  PLAZA_SPEECH_API_KEY: KEYS.openai,
  PLAZA_ELEVENLABS_BASE_URL: url,
  PLAZA_ELEVENLABS_API_KEY: KEYS.eleven,
  PLAZA_POLLY_BASE_URL: url,
  PLAZA_POLLY_REGION: 'eu-west-1',
  PLAZA_POLLY_ACCESS_KEY_ID: KEYS.pollyId,
  PLAZA_POLLY_SECRET_ACCESS_KEY: KEYS.pollySecret,
  PLAZA_AZURE_SPEECH_BASE_URL: url,
  PLAZA_AZURE_SPEECH_API_KEY: KEYS.azure,
})

test.before(async () => {
  fake = await startFakeProviders()
  all = await startTestServer({ env: envAt(fake.url), logger: recordingLogger() })
  quick = await startTestServer({
    env: { ...envAt(fake.url), PLAZA_SPEECH_TIMEOUT_MS: '300', PLAZA_POLLY_TIMEOUT_MS: '300', PLAZA_AZURE_SPEECH_TIMEOUT_MS: '300', PLAZA_ELEVENLABS_TIMEOUT_MS: '300' },
    logger: recordingLogger(),
  })
  bare = await startTestServer()
})
test.after(async () => {
  await Promise.all([all.close(), quick.close(), bare.close()])
  await fake.close()
})
test.before.each(() => void (fake.requests.length = 0))

/** The body as the client received it, or the error reading it ended with. */
async function fetchAudio(server: TestServer, route: string): Promise<{ status: number; type: string | null; provider: string | null; body?: Buffer; error?: Error; json?: any }> {
  const response = await fetch(server.url + route)
  const type = response.headers.get('content-type')
  const base = { status: response.status, type, provider: response.headers.get('x-plaza-provider') }
  if (type?.includes('json')) return { ...base, json: await response.json() }
  try {
    return { ...base, body: Buffer.from(await response.arrayBuffer()) }
  } catch (error) {
    return { ...base, error: error as Error }
  }
}

test('openai: POST /v1/audio/speech with the bearer key, model, voice, format and speed; the audio answered as it came', async () => {
  const res = await fetchAudio(all, '/api/tts/openai?text=Hello%20there&voice=nova&format=flac&speed=1.5')
  assert.is(res.status, 200, JSON.stringify(res.json))
  assert.is(res.type, 'audio/flac')
  assert.is(res.provider, 'speech/env')
  assert.equal(res.body, fakeAudio('flac', 'openai:tts-1:nova:Hello there'))
  const [call] = fake.requests
  assert.equal([call.method, call.path, call.headers.authorization], ['POST', '/v1/audio/speech', `Bearer ${KEYS.openai}`])
  assert.equal(call.body, { model: 'tts-1', input: 'Hello there', voice: 'nova', response_format: 'flac', speed: 1.5 })
  // Defaults: mp3, alloy; a model asked for goes up as named; no speed unless asked.
  const mp3 = await fetchAudio(all, '/api/tts/openai?text=x&model=kokoro')
  assert.is(mp3.type, 'audio/mpeg')
  assert.equal(fake.requests[1].body, { model: 'kokoro', input: 'x', voice: 'alloy', response_format: 'mp3' })
})

test('elevenlabs: POST /v1/text-to-speech/{voice}/stream with xi-api-key and the model; no bearer header', async () => {
  const res = await fetchAudio(all, '/api/tts/elevenlabs?text=Good%20morning&voice=21m00Tcm4TlvDq8ACmtt')
  assert.is(res.status, 200, JSON.stringify(res.json))
  assert.is(res.type, 'audio/mpeg')
  assert.equal(res.body, fakeAudio('mp3', 'elevenlabs:21m00Tcm4TlvDq8ACmtt:Good morning'))
  const [call] = fake.requests
  assert.is(call.path, '/v1/text-to-speech/21m00Tcm4TlvDq8ACmtt/stream')
  assert.is(call.query.get('output_format'), 'mp3_44100_128')
  assert.is(call.headers['xi-api-key'], KEYS.eleven)
  assert.is(call.headers.authorization, undefined)
  assert.equal(call.body, { text: 'Good morning', model_id: 'eleven_multilingual_v2' })
})

const hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex')
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest()

/** Recomputes a SigV4 signature from what the upstream received (AWS's documented algorithm, written out here). */
function expectedSignature(call: RecordedRequest, rawBody: string, secret: string): string {
  const auth = String(call.headers.authorization)
  const [, scope, signedHeaders] = /Credential=[^/]+\/([^,]+), SignedHeaders=([^,]+), Signature=/.exec(auth)!
  const [date, region, service] = scope.split('/')
  const canonicalHeaders = signedHeaders
    .split(';')
    .map((name) => `${name}:${String(call.headers[name]).trim()}\n`)
    .join('')
  const canonical = [call.method, call.path, '', canonicalHeaders, signedHeaders, hex(rawBody)].join('\n')
  const stringToSign = ['AWS4-HMAC-SHA256', call.headers['x-amz-date'], scope, hex(canonical)].join('\n')
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request')
  return createHmac('sha256', key).update(stringToSign).digest('hex')
}

test('polly: POST /v1/speech signed with SigV4 (the signature recomputed here matches); voice capitalised, ogg asked as ogg_vorbis', async () => {
  const res = await fetchAudio(all, '/api/tts/polly?text=Hallo%20Welt&voice=vicki&format=ogg')
  assert.is(res.status, 200, JSON.stringify(res.json))
  assert.is(res.type, 'audio/ogg')
  assert.equal(res.body, fakeAudio('ogg', 'polly:Vicki:Hallo Welt'))
  const [call] = fake.requests
  assert.equal([call.method, call.path, call.headers['content-type']], ['POST', '/v1/speech', 'application/json'])
  assert.equal(call.body, { Text: 'Hallo Welt', TextType: 'text', VoiceId: 'Vicki', OutputFormat: 'ogg_vorbis' })
  const auth = String(call.headers.authorization)
  assert.match(auth, new RegExp(`^AWS4-HMAC-SHA256 Credential=${KEYS.pollyId}/\\d{8}/eu-west-1/polly/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$`))
  assert.match(String(call.headers['x-amz-date']), /^\d{8}T\d{6}Z$/)
  const raw = JSON.stringify(call.body)
  assert.is(call.headers['x-amz-content-sha256'], hex(raw))
  assert.is(/Signature=([0-9a-f]{64})$/.exec(auth)![1], expectedSignature(call, raw, KEYS.pollySecret))
  // The secret itself never travels.
  assert.not.ok(JSON.stringify(call.headers).includes(KEYS.pollySecret))
})

test('azure: SSML with the text escaped (markup is spoken, not obeyed), the locale from the voice, key and output format in headers', async () => {
  const text = `Tom & Jerry <break time="3s"/> it's "fine" </voice><voice name="x">`
  const res = await fetchAudio(all, `/api/tts/azure?text=${encodeURIComponent(text)}&voice=en-GB-SoniaNeural&format=wav`)
  assert.is(res.status, 200, JSON.stringify(res.json))
  assert.is(res.type, 'audio/wav')
  const [call] = fake.requests
  assert.equal([call.method, call.path], ['POST', '/cognitiveservices/v1'])
  assert.equal([call.headers['ocp-apim-subscription-key'], call.headers['x-microsoft-outputformat'], call.headers['content-type']], [KEYS.azure, 'riff-24khz-16bit-mono-pcm', 'application/ssml+xml'])
  const ssml = call.body.toString('utf8')
  assert.is(
    ssml,
    '<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="en-GB"><voice name="en-GB-SoniaNeural">' +
      'Tom &amp; Jerry &lt;break time=&quot;3s&quot;/&gt; it&apos;s &quot;fine&quot; &lt;/voice&gt;&lt;voice name=&quot;x&quot;&gt;</voice></speak>',
  )
  assert.equal(res.body, fakeAudio('wav', `azure:${ssml}`))
})

/** An upstream that sends the first chunk, then waits for the test before sending the rest. */
function gated(head: Buffer, tail: Buffer) {
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  let finished = false
  const behaviour: Behaviour = async (_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg' })
    res.write(head)
    // The timer is only there so that a server that buffers makes this test fail rather than hang.
    await Promise.race([gate, new Promise((resolve) => setTimeout(resolve, 20_000).unref())])
    finished = true
    res.end(tail)
  }
  return { behaviour, release, finished: () => finished }
}

for (const [engine, route] of [
  ['openai', '/api/tts/openai?text=stream'],
  ['elevenlabs', '/api/tts/elevenlabs?text=stream'],
  ['polly', '/api/tts/polly?text=stream'],
  ['azure', '/api/tts/azure?text=stream'],
] as const) {
  test(`${engine}: the first chunk reaches the client before the upstream has finished; then the rest, whole`, async () => {
    const head = Buffer.concat([AUDIO_MAGIC.mp3, Buffer.from('first frames ')])
    const tail = Buffer.from('and the last frames')
    const upstream = gated(head, tail)
    fake.enqueue(upstream.behaviour)
    const response = await fetch(all.url + route)
    assert.is(response.status, 200)
    assert.is(response.headers.get('content-type'), 'audio/mpeg')
    assert.is(response.headers.get('content-length'), null)
    const reader = response.body!.getReader()
    const first = await reader.read()
    assert.not.ok(upstream.finished(), 'the upstream is still waiting')
    assert.equal(Buffer.from(first.value!), head)
    upstream.release()
    const parts = [Buffer.from(first.value!)]
    for (let next = await reader.read(); !next.done; next = await reader.read()) parts.push(Buffer.from(next.value))
    assert.equal(Buffer.concat(parts), Buffer.concat([head, tail]))
  })
}

test('429 with Retry-After: retried on the same provider before the first byte, then the audio', async () => {
  fake.enqueue(json(429, { error: { message: 'rate limited' } }, { 'retry-after': '0' }))
  const res = await fetchAudio(all, '/api/tts/polly?text=patience')
  assert.is(res.status, 200)
  assert.equal(res.body, fakeAudio('mp3', 'polly:Joanna:patience'))
  assert.equal(fake.requests.map((r) => r.path), ['/v1/speech', '/v1/speech'])
  // Each try is signed afresh.
  assert.ok(fake.requests.every((r) => /^AWS4-HMAC-SHA256 /.test(String(r.headers.authorization))))
})

test('a connection dropped before any audio is retried; headers with no audio at all are not audio (502)', async () => {
  const drop: Behaviour = (_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg' })
    res.flushHeaders()
    res.socket?.destroy()
  }
  fake.enqueue(drop)
  const retried = await fetchAudio(all, '/api/tts/elevenlabs?text=again')
  assert.is(retried.status, 200)
  assert.equal(retried.body, fakeAudio('mp3', `elevenlabs:JBFqnCBsd6RMkjVDRZzb:again`))
  assert.is(fake.requests.length, 2)

  fake.enqueue((_req, res) => void res.writeHead(200, { 'content-type': 'audio/mpeg' }).end())
  const empty = await fetchAudio(all, '/api/tts/elevenlabs?text=nothing')
  assert.is(empty.status, 502)
  assert.match(empty.json.message, /elevenlabs provider env \(elevenlabs\) answered no audio/)
})

test('a timeout is 504 naming the provider; silence after the first chunk cuts the client’s answer', async () => {
  fake.enqueue(hang)
  const res = await fetchAudio(quick, '/api/tts/azure?text=slow')
  assert.is(res.status, 504)
  assert.match(res.json.message, /azure_speech provider env \(azure-speech\) did not answer within 300 ms/)

  const stalls: Behaviour = (_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg' })
    res.write(fakeAudio('mp3', 'then nothing'))
  }
  fake.enqueue(stalls)
  const cut = await fetchAudio(quick, '/api/tts/openai?text=stall')
  assert.is(cut.status, 200)
  assert.instance(cut.error, Error)
  assert.is(cut.body, undefined)
})

test('5xx on every try: 502 with the upstream’s message after the retries', async () => {
  fake.enqueue(json(500, { error: { message: 'engine exploded' } }), json(502, 'Bad Gateway'), json(503, { message: 'still down' }))
  const res = await fetchAudio(all, '/api/tts/openai?text=x')
  assert.is(res.status, 502)
  assert.is(res.json.status, 'error')
  assert.match(res.json.message, /speech provider env \(openai-speech\) answered 503: still down/)
  assert.is(fake.requests.length, 3)
})

test('malformed JSON error bodies and JSON in place of audio: 502 with readable messages; bytes that are not the format asked: 502', async () => {
  fake.enqueue(json(400, '{"detail": {"status": "invalid_uid", "message": '))
  const broken = await fetchAudio(all, '/api/tts/elevenlabs?text=x')
  assert.is(broken.status, 502)
  assert.match(broken.json.message, /answered 400: \{"detail": \{"status": "invalid_uid", "message":/)

  fake.enqueue(json(422, { detail: { status: 'voice_not_found', message: 'A voice with that id was not found.' } }))
  assert.match((await fetchAudio(all, '/api/tts/elevenlabs?text=x')).json.message, /answered 422: A voice with that id was not found\./)

  // A local server answering its error with 200 and JSON.
  fake.enqueue(json(200, '{"error": "model not loaded"'))
  const okJson = await fetchAudio(all, '/api/tts/openai?text=x')
  assert.is(okJson.status, 502)
  assert.match(okJson.json.message, /answered application\/json instead of audio: \{"error": "model not loaded"/)

  fake.enqueue((_req, res) => void res.writeHead(200, { 'content-type': 'audio/mpeg' }).end('<html>login</html>'))
  const html = await fetchAudio(all, '/api/tts/azure?text=x')
  assert.is(html.status, 502)
  assert.match(html.json.message, /answered something that is not mp3 audio/)
})

test('an upstream cut mid-stream: the client sees an incomplete answer, never a complete 200; the log says why, without keys', async () => {
  const cut: Behaviour = (_req, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg' })
    res.write(fakeAudio('mp3', 'half a sentence'), () => res.socket?.destroy())
  }
  fake.enqueue(cut)
  const res = await fetchAudio(all, '/api/tts/polly?text=cut')
  assert.is(res.status, 200)
  assert.instance(res.error, Error, 'reading the body fails')
  assert.is(fake.requests.length, 1, 'not retried once audio was sent')
  // The client can see the cut before the server's pipeline has rejected (Node 24 settles it a turn
  // later than Node 20): the line is waited for, not expected at once.
  const logged = () => lines.some((line) => line.startsWith('warn speech stream cut') && line.includes('"service":"polly"'))
  for (let i = 0; i < 1000 && !logged(); i++) await new Promise((resolve) => setTimeout(resolve, 5))
  assert.ok(logged(), lines.join('\n'))
})

test('a client that leaves mid-stream ends the upstream call', async () => {
  let closed!: () => void
  const upstreamClosed = new Promise<void>((resolve) => (closed = resolve))
  fake.enqueue((_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg' })
    res.write(fakeAudio('mp3', 'a long speech'))
    res.on('close', closed)
  })
  const controller = new AbortController()
  const response = await fetch(all.url + '/api/tts/elevenlabs?text=long', { signal: controller.signal })
  const reader = response.body!.getReader()
  assert.equal(Buffer.from((await reader.read()).value!), fakeAudio('mp3', 'a long speech'))
  controller.abort()
  // The timer is only there so that a regression fails rather than hangs.
  const outcome = await Promise.race([upstreamClosed.then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 20_000, 'still open').unref())])
  assert.is(outcome, 'closed')
})

test('keys echoed by an upstream are redacted from answers and logs', async () => {
  const echo = (key: string) => json(401, { error: { message: `invalid key ${key}` }, message: `invalid key ${key}`, detail: { message: `invalid key ${key}` } })
  for (const [route, key] of [
    ['/api/tts/openai?text=x', KEYS.openai],
    ['/api/tts/elevenlabs?text=x', KEYS.eleven],
    ['/api/tts/polly?text=x', `${KEYS.pollyId} ${KEYS.pollySecret}`],
    ['/api/tts/azure?text=x', KEYS.azure],
  ] as const) {
    fake.enqueue(echo(key))
    const res = await fetchAudio(all, route)
    assert.is(res.status, 502)
    assert.match(res.json.message, /invalid key \[redacted\]/)
    for (const secret of Object.values(KEYS)) assert.not.ok(JSON.stringify(res.json).includes(secret), route)
  }
  for (const secret of Object.values(KEYS)) assert.not.ok(lines.some((line) => line.includes(secret)), `a key in the log: ${secret}`)
  assert.ok(lines.some((line) => line.includes('provider call failed') && line.includes('[redacted]')))
})

test('a fallback from the file serves when the first target fails; the answer names it', async () => {
  const file = path.join(tempDir(), 'speech.yaml')
  writeFileSync(
    file,
    [
      'services:',
      '  speech:',
      '    - protocol: openai-speech',
      `      base_url: ${fake.url}/down/v1`,
      `      model: tts-1-hd`,
      '    - protocol: openai-speech',
      `      base_url: ${fake.url}/v1`,
      '      models: { hd: kokoro }',
    ].join('\n'),
  )
  const server = await startTestServer({ env: { PLAZA_LLM_CONFIG: file } })
  try {
    fake.enqueue(json(404, { error: { message: 'no such route' } }))
    const res = await fetchAudio(server, '/api/tts/openai?text=fallback&model=hd')
    assert.is(res.status, 200)
    assert.is(res.provider, 'speech/speech.1')
    assert.equal(fake.requests.map((r) => r.path), ['/down/v1/audio/speech', '/v1/audio/speech'])
    // The model asked for, mapped by the second target's `models`.
    assert.is(fake.requests[1].body.model, 'kokoro')
    assert.equal(res.body, fakeAudio('mp3', 'openai:kokoro:alloy:fallback'))
  } finally {
    await server.close()
  }
})

test('Accept: application/json stores the whole audio under uploads/tts/ and serves it; the same request reuses it; a cut stores nothing', async () => {
  const res = await all.request('GET', '/api/tts/openai?text=Stored%20speech&voice=echo&format=opus', { headers: { accept: 'application/json' } })
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.is(res.headers.get('x-plaza-provider'), 'speech/env')
  const audio = fakeAudio('opus', 'openai:tts-1:echo:Stored speech')
  assert.match(res.body.path, /^uploads\/tts\/[\w-]{24}\.ogg$/)
  assert.equal([res.body.message, res.body.format, res.body.voice, res.body.bytes], ['Speech synthesised with the OpenAI-compatible provider (voice echo)', 'opus', 'echo', audio.length])
  const served = await fetch(res.body.url)
  assert.is(served.status, 200)
  assert.is(served.headers.get('content-type'), 'audio/ogg')
  assert.equal(Buffer.from(await served.arrayBuffer()), audio)
  const again = await all.request('GET', '/api/tts/openai?text=Stored%20speech&voice=echo&format=opus', { headers: { accept: 'application/json' } })
  assert.is(again.body.path, res.body.path)
  assert.is(fake.requests.length, 1, 'the stored file is reused')

  fake.enqueue((_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg' })
    res.write(fakeAudio('mp3', 'half'), () => res.socket?.destroy())
  })
  const cut = await all.request('GET', '/api/tts/azure?text=cut%20while%20storing', { headers: { accept: 'application/json' } })
  assert.is(cut.status, 502)
  assert.match(cut.body.message, /the audio stopped before its end/)
  // Asked again, it is fetched again: nothing was stored.
  const whole = await all.request('GET', '/api/tts/azure?text=cut%20while%20storing', { headers: { accept: 'application/json' } })
  assert.is(whole.status, 200)
  assert.is(fake.requests.length, 3)
  // Unconfigured: 503 as for the audio.
  assert.is((await bare.request('GET', '/api/tts/polly?text=x', { headers: { accept: 'application/json' } })).status, 503)
})

test('bad input is a 400 naming the field and reaches no provider', async () => {
  const cases: [string, RegExp][] = [
    ['/api/tts/openai', /text/],
    ['/api/tts/openai?text=', /text is required/],
    [`/api/tts/openai?text=${'a'.repeat(2001)}`, /longer than 2000 characters/],
    ['/api/tts/openai?text=x&speed=5', /speed must be from 0.25 to 4/],
    ['/api/tts/openai?text=x&speed=fast', /speed must be a number/],
    ['/api/tts/openai?text=x&format=wma', /format must be one of: mp3, opus, aac, flac, wav/],
    ['/api/tts/openai?text=x&voice=a%20b', /voice must be/],
    ['/api/tts/openai?text=x&model=..%2F..%20x', /model must be/],
    ['/api/tts/elevenlabs?text=x&voice=..%2Fadmin', /voice must be an ElevenLabs voice id/],
    ['/api/tts/elevenlabs?text=x&format=wav', /format must be one of: mp3/],
    ['/api/tts/polly?text=x&voice=Joanna1', /voice must be an Amazon Polly voice id/],
    ['/api/tts/azure?text=x&voice=Ava', /voice must be an Azure voice name/],
    ['/api/tts/azure?text=x&voice=en-US-Ava%22%3E', /voice must be an Azure voice name/],
  ]
  for (const [route, message] of cases) {
    const res = await all.request('GET', route)
    assert.is(res.status, 400, route)
    assert.match(res.body.message, message, route)
  }
  assert.is(fake.requests.length, 0)
})

test('nothing configured: 503 saying what to set; /api/list shows configured false (true where set)', async () => {
  const expected: [string, RegExp][] = [
    ['/api/tts/openai?text=x', /No speech provider is configured: set PLAZA_SPEECH_BASE_URL/],
    ['/api/tts/elevenlabs?text=x', /No elevenlabs provider is configured: set PLAZA_ELEVENLABS_API_KEY/],
    ['/api/tts/polly?text=x', /set PLAZA_POLLY_REGION, PLAZA_POLLY_ACCESS_KEY_ID and PLAZA_POLLY_SECRET_ACCESS_KEY/],
    ['/api/tts/azure?text=x', /set PLAZA_AZURE_SPEECH_REGION and PLAZA_AZURE_SPEECH_API_KEY, or PLAZA_AZURE_SPEECH_BASE_URL/],
  ]
  for (const [route, message] of expected) {
    const res = await bare.request('GET', route)
    assert.is(res.status, 503, route)
    assert.match(res.body.message, message)
  }
  const paths = ['/api/tts/openai', '/api/tts/elevenlabs', '/api/tts/polly', '/api/tts/azure']
  const listed = async (server: TestServer) =>
    ((await server.request('GET', '/api/list?group=Audio')).body.operations as { path: string; configured: boolean; offered: boolean }[]).filter((op) => paths.includes(op.path))
  assert.equal((await listed(bare)).map((op) => [op.path, op.offered, op.configured]), paths.map((p) => [p, true, false]))
  assert.equal((await listed(all)).map((op) => op.configured), [true, true, true, true])
})

test.run()
