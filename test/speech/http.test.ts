/**
 * GET /api/tts/flite, /api/tts/espeak and their /voices on the real server. Every answer is
 * decoded (test/helpers/audio.ts: WAV header and samples, MP3 frames) and checked for what a
 * listener would get: the voice's sample rate, sound rather than silence, a length that follows
 * the text.
 */
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { FLITE_VOICES, fliteInput, SPEECH_TEXT_MAX } from '../../src/shared/schemas/speech.js'
import { parseMp3, parseWav, rms } from '../helpers/audio.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

let server: TestServer

test.before(async () => {
  server = await startTestServer()
})
test.after(async () => {
  await server.close()
})

const SENTENCE = 'The quick brown fox jumps over the lazy dog.'
const tts = (engine: string, query: Record<string, string>, headers: Record<string, string> = {}) =>
  server.request('GET', `/api/tts/${engine}?${new URLSearchParams(query)}`, { headers })
const json = { accept: 'application/json' }

/** Loud enough to be speech: 16-bit samples of a spoken sentence sit in the thousands; silence is 0. */
const SPEECH_RMS_FLOOR = 300

test('flite: a WAV (RIFF, PCM, mono, 16-bit) at the voice\'s sample rate, with sound in it', async () => {
  for (const voice of ['slt', 'kal']) {
    const res = await tts('flite', { text: SENTENCE, voice })
    assert.is(res.status, 200, JSON.stringify(res.body))
    assert.is(res.headers.get('content-type'), 'audio/wav')
    const wav = parseWav(res.body)
    const expected = FLITE_VOICES.find((v) => v.name === voice)!.sample_rate
    assert.equal([wav.format, wav.channels, wav.bitsPerSample, wav.sampleRate], [1, 1, 16, expected], voice)
    assert.is(Number(res.headers.get('x-audio-sample-rate')), expected)
    assert.is(res.headers.get('x-speech-voice'), voice)
    // A nine-word sentence takes a couple of seconds to say, not milliseconds nor a minute.
    assert.ok(wav.durationMs > 1500 && wav.durationMs < 6000, `${voice}: ${wav.durationMs} ms`)
    assert.ok(Math.abs(Number(res.headers.get('x-audio-duration-ms')) - wav.durationMs) <= 1)
    assert.ok(rms(wav.samples) > SPEECH_RMS_FLOOR, `${voice}: rms ${rms(wav.samples)}`)
  }
})

test('flite: longer text gives longer audio; different voices give different audio', async () => {
  const short = parseWav((await tts('flite', { text: 'Hello.', voice: 'rms' })).body)
  const long = parseWav((await tts('flite', { text: `Hello. ${SENTENCE} ${SENTENCE}`, voice: 'rms' })).body)
  assert.ok(long.durationMs > short.durationMs * 3, `${short.durationMs} ms then ${long.durationMs} ms`)
  const slt = parseWav((await tts('flite', { text: SENTENCE, voice: 'slt' })).body)
  const awb = parseWav((await tts('flite', { text: SENTENCE, voice: 'AWB' })).body)
  assert.is(slt.sampleRate, awb.sampleRate)
  assert.ok(Math.abs(slt.samples.length - awb.samples.length) > 160 || Buffer.compare(Buffer.from(slt.samples.buffer), Buffer.from(awb.samples.buffer)) !== 0)
  // Not merely different bytes: the two voices' loudness envelopes differ sample by sample.
  const n = Math.min(slt.samples.length, awb.samples.length)
  let same = 0
  for (let i = 0; i < n; i++) if (slt.samples[i] === awb.samples[i]) same++
  assert.ok(same / n < 0.5, `${same} of ${n} samples equal`)
})

test('flite: format=mp3 is MPEG audio Layer III at the voice\'s rate, as long as the WAV', async () => {
  const wav = parseWav((await tts('flite', { text: SENTENCE, voice: 'kal16' })).body)
  const res = await tts('flite', { text: SENTENCE, voice: 'kal16', format: 'MP3' })
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.is(res.headers.get('content-type'), 'audio/mpeg')
  assert.equal([res.body[0], res.body[1] & 0xe0], [0xff, 0xe0])
  const mp3 = parseMp3(res.body)
  assert.equal([mp3.sampleRate, mp3.channels, mp3.version], [16000, 1, 2])
  // The encoder pads the end to whole frames and adds its delay: a few frames of 36 ms at most.
  assert.ok(mp3.durationMs >= wav.durationMs && mp3.durationMs < wav.durationMs + 200, `mp3 ${mp3.durationMs} ms, wav ${wav.durationMs} ms`)
  assert.ok(res.body.length < wav.samples.length, 'an MP3 smaller than its 16-bit PCM')
  const kal = parseMp3((await tts('flite', { text: SENTENCE, voice: 'kal', format: 'mp3' })).body)
  assert.equal([kal.sampleRate, kal.version], [8000, 2.5])
})

test('control characters count as spaces; text is trimmed', async () => {
  const plain = await tts('flite', { text: 'Hello world', voice: 'kal' })
  const controlled = await tts('flite', { text: '\u0007 Hello\u0000world\u001b\u0085 ', voice: 'kal' })
  assert.is(controlled.status, 200, JSON.stringify(controlled.body))
  assert.ok(Buffer.compare(plain.body, controlled.body) === 0)
  const dash = await tts('flite', { text: '-voice rms -o /etc/passwd', voice: 'kal' })
  assert.is(dash.status, 200)
  assert.ok(parseWav(dash.body).durationMs > 1000, 'the options were spoken as text')
})

test('Accept: application/json stores the audio under uploads/tts/ and describes it; asking again reuses the file', async () => {
  const first = await tts('flite', { text: 'Stored speech.', voice: 'slt' }, json)
  assert.is(first.status, 200, JSON.stringify(first.body))
  assert.match(first.body.path, /^uploads\/tts\/[\w-]{24}\.wav$/)
  assert.equal(Object.keys(first.body).sort(), ['duration_ms', 'format', 'message', 'path', 'sample_rate', 'url', 'voice'])
  assert.equal([first.body.format, first.body.sample_rate, first.body.voice], ['wav', 16000, 'slt'])
  const served = await fetch(first.body.url)
  assert.is(served.headers.get('content-type'), 'audio/wav')
  const wav = parseWav(Buffer.from(await served.arrayBuffer()))
  assert.is(first.body.duration_ms, Math.round(wav.durationMs))
  assert.ok(rms(wav.samples) > SPEECH_RMS_FLOOR)
  const again = await tts('flite', { text: ' Stored speech.\u0000', voice: 'SLT' }, json)
  assert.equal(again.body, first.body)

  const mp3 = await tts('flite', { text: 'Stored speech.', voice: 'slt', format: 'mp3' }, json)
  assert.match(mp3.body.path, /^uploads\/tts\/[\w-]{24}\.mp3$/)
  const file = parseMp3(Buffer.from(await (await fetch(mp3.body.url)).arrayBuffer()))
  assert.equal([mp3.body.sample_rate, mp3.body.duration_ms], [16000, Math.round(file.durationMs)])
  const reused = await tts('flite', { text: 'Stored speech.', voice: 'slt', format: 'mp3' }, json)
  assert.equal(reused.body, mp3.body)
})

test('espeak: two languages, each at 22 050 Hz with sound; speed and pitch change the audio', async () => {
  const fr = await tts('espeak', { text: 'Bonjour tout le monde, comment allez-vous ?', voice: 'fr' })
  const de = await tts('espeak', { text: 'Guten Tag, wie geht es Ihnen heute?', voice: 'de' })
  for (const [res, voice] of [[fr, 'fr'], [de, 'de']] as const) {
    assert.is(res.status, 200, JSON.stringify(res.body))
    const wav = parseWav(res.body)
    assert.equal([wav.format, wav.channels, wav.sampleRate], [1, 1, 22050])
    assert.ok(wav.durationMs > 1000 && wav.durationMs < 6000, `${voice}: ${wav.durationMs} ms`)
    assert.ok(rms(wav.samples) > SPEECH_RMS_FLOOR, `${voice}: rms ${rms(wav.samples)}`)
    assert.is(res.headers.get('x-speech-voice'), voice)
  }
  // The same words read as French and as English sound different.
  const asFrench = parseWav((await tts('espeak', { text: 'Paris is beautiful in the spring', voice: 'fr' })).body)
  const asEnglish = parseWav((await tts('espeak', { text: 'Paris is beautiful in the spring', voice: 'en-us' })).body)
  assert.not.equal(asFrench.samples.length, asEnglish.samples.length)
  const slow = parseWav((await tts('espeak', { text: SENTENCE, speed: '100' })).body)
  const fast = parseWav((await tts('espeak', { text: SENTENCE, speed: '400' })).body)
  assert.ok(slow.durationMs > fast.durationMs * 2, `slow ${slow.durationMs} ms, fast ${fast.durationMs} ms`)
  const low = parseWav((await tts('espeak', { text: SENTENCE, pitch: '10' })).body)
  const high = parseWav((await tts('espeak', { text: SENTENCE, pitch: '90' })).body)
  assert.ok(Buffer.compare(Buffer.from(low.samples.buffer), Buffer.from(high.samples.buffer)) !== 0)
  const mp3 = await tts('espeak', { text: 'Hola, ¿qué tal?', voice: 'es', format: 'mp3' }, json)
  assert.is(mp3.status, 200, JSON.stringify(mp3.body))
  assert.equal([mp3.body.format, mp3.body.sample_rate, mp3.body.voice], ['mp3', 22050, 'es'])
  assert.ok(parseMp3(Buffer.from(await (await fetch(mp3.body.url)).arrayBuffer())).frames > 10)
})

test('the voices: Flite\'s built-in list; eSpeak NG\'s from the installed package, which voice= accepts', async () => {
  const flite = await server.request('GET', '/api/tts/flite/voices')
  assert.is(flite.status, 200)
  assert.equal(flite.body.voices.map((v: { name: string }) => v.name).sort(), ['awb', 'kal', 'kal16', 'rms', 'slt'])
  const espeak = await server.request('GET', '/api/tts/espeak/voices')
  assert.is(espeak.status, 200)
  assert.ok(espeak.body.voices.length > 100, `${espeak.body.voices.length} voices`)
  const ids = espeak.body.voices.map((v: { id: string }) => v.id)
  for (const id of ['en-us', 'en-gb', 'de', 'es', 'fr-fr', 'it', 'ja', 'pt-br']) assert.ok(ids.includes(id), id)
  const viaIdentifier = await tts('espeak', { text: 'hello', voice: 'gmw/en-US' })
  assert.is(viaIdentifier.status, 200)
})

test('bad input: a 4xx naming the problem for each, and nothing is stored', async () => {
  const before = existsSync(path.join(server.dataDir, 'uploads', 'tts')) ? readdirSync(path.join(server.dataDir, 'uploads', 'tts')).sort() : []
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['flite', {}, /text/],
    ['flite', { text: '' }, /text is required/],
    ['flite', { text: ' \u0000\u0007\n\t ' }, /text is required/],
    ['flite', { text: 'a'.repeat(SPEECH_TEXT_MAX + 1) }, /text is longer than 1000 characters/],
    ['flite', { text: 'hi', voice: 'darth' }, /voice must be one of: slt, rms, awb, kal16, kal/],
    ['flite', { text: 'hi', voice: 'awb_time' }, /voice must be one of/],
    ['flite', { text: 'hi', format: 'ogg' }, /format must be one of: wav, mp3/],
    ['espeak', { text: '' }, /text is required/],
    ['espeak', { text: 'hi', voice: 'klingon' }, /voice must be one of eSpeak NG's voices .*en-us/],
    ['espeak', { text: 'hi', format: 'flac' }, /format must be one of/],
    ['espeak', { text: 'hi', speed: '79' }, /speed must be from 80 to 450/],
    ['espeak', { text: 'hi', speed: 'fast' }, /speed must be a whole number/],
    ['espeak', { text: 'hi', pitch: '100' }, /pitch must be from 0 to 99/],
    ['espeak', { text: 'x'.repeat(SPEECH_TEXT_MAX + 1), voice: 'fr' }, /longer than 1000/],
  ]
  for (const [engine, query, message] of cases) {
    const res = await tts(engine, query, json)
    assert.is(res.status, 400, `${engine} ${JSON.stringify(query).slice(0, 80)}: ${res.status}`)
    assert.is(res.body.status, 'error')
    assert.match(res.body.message, message)
  }
  const after = existsSync(path.join(server.dataDir, 'uploads', 'tts')) ? readdirSync(path.join(server.dataDir, 'uploads', 'tts')).sort() : []
  assert.equal(after, before)
})

test('the limit counts characters (code points), not UTF-16 units', () => {
  assert.is(fliteInput.parse({ text: '🙂'.repeat(SPEECH_TEXT_MAX) }).text.length, SPEECH_TEXT_MAX * 2)
  assert.throws(() => fliteInput.parse({ text: '🙂'.repeat(SPEECH_TEXT_MAX + 1) }), /longer than 1000/)
  assert.is(fliteInput.parse({ text: ` ${'a'.repeat(SPEECH_TEXT_MAX)}\u0000 ` }).text.length, SPEECH_TEXT_MAX)
})

test('speech that would last past SPEECH_AUDIO_MAX_MS is a 413 (the cost of its MP3 is never paid); the worker serves on', async () => {
  const text = `${SENTENCE} `.repeat(22)
  const slow = await tts('espeak', { text, voice: 'en-us', speed: '80', format: 'mp3' }, json)
  assert.is(slow.status, 413)
  assert.match(slow.body.message, /^the speech would last \d+ s, more than the 90 s limit: send less text or a higher speed$/)
  const fast = await tts('espeak', { text, voice: 'en-us', speed: '300', format: 'mp3' })
  assert.is(fast.status, 200)
})

test('many runs in a row do not crash the worker (node:wasi segfaulted after ~14)', async () => {
  for (let i = 0; i < 40; i++) {
    const res = await tts('flite', { text: `Run number ${i}.`, voice: i % 2 ? 'kal' : 'slt' })
    assert.is(res.status, 200, `run ${i}: ${JSON.stringify(res.body)}`)
    assert.ok(rms(parseWav(res.body).samples) > SPEECH_RMS_FLOOR, `run ${i}`)
  }
  assert.is(server.services.speech.stats.workers, Math.min(server.services.speech.stats.workers, 2))
})

test('a long synthesis does not hold up other requests: the voices list answers while it runs', async () => {
  const text = `${SENTENCE} `.repeat(20)
  let finished = false
  const job = tts('flite', { text, voice: 'slt', format: 'mp3' }).then((res) => {
    finished = true
    return res
  })
  // Wait (without a timer) until the job is in a worker's hands.
  while (server.services.speech.stats.running === 0) await new Promise((resolve) => setImmediate(resolve))
  const cheap = await server.request('GET', '/api/tts/flite/voices')
  assert.is(cheap.status, 200)
  assert.not.ok(finished, 'the synthesis finished before the cheap request answered: the check proved nothing')
  const res = await job
  assert.is(res.status, 200)
  assert.ok(parseMp3(res.body).durationMs > 20_000)
})

test.run()
