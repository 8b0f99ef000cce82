/** `plaza util tts --engine openai|elevenlabs|polly|azure`, run as the built binary (`npm run build` first): embedded and remote. */
import { existsSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { fakeAudio, json, startFakeProviders, type FakeProviders } from '../providers/fake-providers.js'
import { runCli } from '../helpers/cli.js'
import { startTestServer, tempDir as makeTempDir, type TestServer } from '../helpers/server.js'

let fake: FakeProviders
let server: TestServer
const dirs: string[] = []
const tempDir = () => {
  const dir = makeTempDir()
  dirs.push(dir)
  return dir
}

const envAt = (url: string): NodeJS.ProcessEnv => ({
  PLAZA_SPEECH_BASE_URL: `${url}/v1`,
  PLAZA_SPEECH_API_KEY: 'sk-cli-secret-1',
  PLAZA_ELEVENLABS_BASE_URL: url,
  PLAZA_ELEVENLABS_API_KEY: 'xi-cli-secret-2',
  PLAZA_POLLY_BASE_URL: url,
  PLAZA_POLLY_REGION: 'us-east-1',
  PLAZA_POLLY_ACCESS_KEY_ID: 'AKIDCLI3',
  PLAZA_POLLY_SECRET_ACCESS_KEY: 'cli-secret-4',
  PLAZA_AZURE_SPEECH_BASE_URL: url,
  PLAZA_AZURE_SPEECH_API_KEY: 'az-cli-secret-5',
})

test.before(async () => {
  fake = await startFakeProviders()
  server = await startTestServer({ env: envAt(fake.url) })
})
test.after(async () => {
  await server.close()
  await fake.close()
  dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }))
})
test.before.each(() => void (fake.requests.length = 0))

const plaza = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd, env: { PLAZA_DATA_DIR: path.join(cwd, '.plaza'), ...env } })

test('embedded: each provider engine writes speech.<format> from this environment’s provider; --json describes it', async () => {
  const dir = tempDir()
  const run = await plaza(['util', 'tts', 'Hello from the command line', '--engine', 'openai', '--voice', 'nova', '--speed', '1.25'], dir, envAt(fake.url))
  assert.is(run.code, 0, run.stderr)
  assert.is(run.stdout.trim(), 'speech.mp3')
  assert.equal(readFileSync(path.join(dir, 'speech.mp3')), fakeAudio('mp3', 'openai:tts-1:nova:Hello from the command line'))
  assert.is(fake.requests[0].body.speed, 1.25)

  for (const [engine, format, said] of [
    ['elevenlabs', 'mp3', 'elevenlabs:JBFqnCBsd6RMkjVDRZzb:Bonjour'],
    ['polly', 'ogg', 'polly:Joanna:Bonjour'],
  ] as const) {
    const described = await plaza(['util', 'tts', 'Bonjour', '--engine', engine, '--format', format, '-o', `${engine}.${format}`, '--json'], dir, envAt(fake.url))
    assert.is(described.code, 0, described.stderr)
    const body = fakeAudio(format, said)
    assert.equal(JSON.parse(described.stdout), { output: `${engine}.${format}`, engine, voice: engine === 'polly' ? 'Joanna' : 'JBFqnCBsd6RMkjVDRZzb', format, bytes: body.length, provider: `${engine}/env` })
    assert.equal(readFileSync(path.join(dir, `${engine}.${format}`)), body)
  }
  assert.match(String(fake.requests.at(-1)!.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIDCLI3\//)
})

test('remote: --url streams the server’s answer into the file; its refusals come back as errors', async () => {
  const dir = tempDir()
  const run = await plaza(['util', 'tts', 'Guten Tag', '--engine', 'azure', '--voice', 'de-DE-KatjaNeural', '--format', 'wav', '--url', server.url, '--json'], dir)
  assert.is(run.code, 0, run.stderr)
  const described = JSON.parse(run.stdout)
  assert.equal([described.output, described.engine, described.voice, described.format, described.provider], ['speech.wav', 'azure', 'de-DE-KatjaNeural', 'wav', 'azure_speech/env'])
  const file = readFileSync(path.join(dir, 'speech.wav'))
  assert.is(described.bytes, file.length)
  assert.match(file.toString('utf8'), /^RIFF.*azure:<speak .*xml:lang="de-DE"><voice name="de-DE-KatjaNeural">Guten Tag<\/voice><\/speak>$/s)

  fake.enqueue(json(500, { error: { message: 'down' } }), json(500, { error: { message: 'down' } }), json(500, { error: { message: 'down for good' } }))
  const failed = await plaza(['util', 'tts', 'x', '--engine', 'openai', '--url', server.url, '-o', 'failed.mp3'], dir)
  assert.is(failed.code, 1)
  assert.match(failed.stderr, /answered 500: down for good/)
  assert.not.ok(existsSync(path.join(dir, 'failed.mp3')))
})

test('usage errors exit 2 before anything is asked; an unconfigured provider exits 1 saying what to set; no key in any output', async () => {
  const dir = tempDir()
  const badVoice = await plaza(['util', 'tts', 'x', '--engine', 'elevenlabs', '--voice', '../x', '-o', 'bad.mp3'], dir, envAt(fake.url))
  assert.is(badVoice.code, 2)
  assert.match(badVoice.stderr, /voice must be an ElevenLabs voice id/)
  const badFormat = await plaza(['util', 'tts', 'x', '--engine', 'polly', '--format', 'flac', '-o', 'bad.flac'], dir, envAt(fake.url))
  assert.is(badFormat.code, 2)
  assert.match(badFormat.stderr, /format must be one of: mp3, ogg/)
  const speedForFlite = await plaza(['util', 'tts', 'x', '--speed', '2', '-o', 'bad.wav'], dir)
  assert.is(speedForFlite.code, 2)
  assert.is(fake.requests.length, 0)

  const unconfigured = await plaza(['util', 'tts', 'x', '--engine', 'polly', '-o', 'none.mp3'], dir)
  assert.is(unconfigured.code, 1)
  assert.match(unconfigured.stderr, /set PLAZA_POLLY_REGION, PLAZA_POLLY_ACCESS_KEY_ID and PLAZA_POLLY_SECRET_ACCESS_KEY/)
  assert.not.ok(existsSync(path.join(dir, 'none.mp3')))

  fake.enqueue(json(401, { detail: { message: 'invalid key az-cli-secret-5' } }))
  const echoed = await plaza(['util', 'tts', 'x', '--engine', 'azure', '-o', 'echo.mp3'], dir, envAt(fake.url))
  assert.is(echoed.code, 1)
  assert.match(echoed.stderr, /invalid key \[redacted\]/)
  assert.not.ok(echoed.stderr.includes('az-cli-secret-5'))
})

test('an upstream cut mid-stream: exit 1, and the partial file is removed (embedded and remote)', async () => {
  const dir = tempDir()
  const cut = () =>
    fake.enqueue((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' })
      res.write(fakeAudio('mp3', 'half'), () => res.socket?.destroy())
    })
  cut()
  const embedded = await plaza(['util', 'tts', 'x', '--engine', 'openai', '-o', 'cut.mp3'], dir, envAt(fake.url))
  assert.is(embedded.code, 1)
  assert.match(embedded.stderr, /the audio stopped before its end/)
  assert.not.ok(existsSync(path.join(dir, 'cut.mp3')))
  cut()
  const remote = await plaza(['util', 'tts', 'x', '--engine', 'openai', '--url', server.url, '-o', 'cut2.mp3'], dir)
  assert.is(remote.code, 1)
  assert.match(remote.stderr, /the audio stopped before its end/)
  assert.not.ok(existsSync(path.join(dir, 'cut2.mp3')))
})

test.run()
