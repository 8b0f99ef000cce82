/** `plaza util tts`, run as the built binary (`npm run build` first; `npm test` does it): embedded and remote. */
import { readFileSync, rmSync, existsSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parseMp3, parseWav, rms } from '../helpers/audio.js'
import { runCli } from '../helpers/cli.js'
import { startTestServer, tempDir as makeTempDir } from '../helpers/server.js'

const dirs: string[] = []
const tempDir = () => {
  const dir = makeTempDir()
  dirs.push(dir)
  return dir
}
test.after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

const plaza = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd, env: { PLAZA_DATA_DIR: path.join(cwd, '.plaza'), ...env } })

test('embedded: flite writes speech.wav and prints its path; --json describes it', async () => {
  const dir = tempDir()
  const run = await plaza(['util', 'tts', 'Hello from the command line'], dir)
  assert.is(run.code, 0, run.stderr)
  assert.is(run.stdout.trim(), 'speech.wav')
  const wav = parseWav(readFileSync(path.join(dir, 'speech.wav')))
  assert.equal([wav.format, wav.channels, wav.sampleRate], [1, 1, 16000])
  assert.ok(rms(wav.samples) > 300)
  const json = await plaza(['util', 'tts', 'Small voice', '--voice', 'kal', '--format', 'mp3', '-o', 'small.mp3', '--json'], dir)
  assert.is(json.code, 0, json.stderr)
  const described = JSON.parse(json.stdout)
  const mp3 = parseMp3(readFileSync(path.join(dir, 'small.mp3')))
  assert.equal(described, { output: 'small.mp3', engine: 'flite', voice: 'kal', format: 'mp3', sample_rate: 8000, duration_ms: Math.round(mp3.durationMs), bytes: readFileSync(path.join(dir, 'small.mp3')).length })
})

test('embedded: espeak in French; bad voice is a usage error (exit 2) and writes nothing; espeak missing says what to install', async () => {
  const dir = tempDir()
  const fr = await plaza(['util', 'tts', 'Bonjour tout le monde', '--engine', 'espeak', '--voice', 'fr', '-o', 'fr.wav'], dir)
  assert.is(fr.code, 0, fr.stderr)
  const wav = parseWav(readFileSync(path.join(dir, 'fr.wav')))
  assert.is(wav.sampleRate, 22050)
  assert.ok(rms(wav.samples) > 300)
  const bad = await plaza(['util', 'tts', 'hi', '--voice', 'darth', '-o', 'bad.wav'], dir)
  assert.is(bad.code, 2)
  assert.match(bad.stderr, /voice must be one of: slt, rms, awb, kal16, kal/)
  const badEspeak = await plaza(['util', 'tts', 'hi', '--engine', 'espeak', '--voice', 'klingon', '-o', 'bad.wav'], dir)
  assert.is(badEspeak.code, 2)
  assert.not.ok(existsSync(path.join(dir, 'bad.wav')))
  const missing = await plaza(['util', 'tts', 'hi', '--engine', 'espeak', '-o', 'bad.wav'], dir, { PLAZA_ESPEAK_MODULE: '/nonexistent/espeak-ng.js' })
  assert.is(missing.code, 1)
  assert.match(missing.stderr, /npm install @echogarden\/espeak-ng-emscripten/)
  assert.not.ok(existsSync(path.join(dir, 'bad.wav')))
})

test('remote: --url asks the server; its refusals come back as errors', async () => {
  const server = await startTestServer()
  try {
    const dir = tempDir()
    const run = await plaza(['util', 'tts', 'Remote speech', '--engine', 'espeak', '--voice', 'de', '--format', 'mp3', '--url', server.url, '--json'], dir)
    assert.is(run.code, 0, run.stderr)
    const described = JSON.parse(run.stdout)
    assert.equal([described.output, described.voice, described.sample_rate], ['speech.mp3', 'de', 22050])
    assert.ok(parseMp3(readFileSync(path.join(dir, 'speech.mp3'))).frames > 10)
    const bad = await plaza(['util', 'tts', 'hi', '--voice', 'darth', '--url', server.url], dir)
    assert.is(bad.code, 2)
    assert.match(bad.stderr, /voice must be one of/)
  } finally {
    await server.close()
  }
})

test.run()
