/** `plaza util online`, `clips`, `lens` and `identify`, run as the built binary (`npm run build` first): embedded and remote, against loopback providers. */
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { reply, startFakeUpstream, type FakeUpstream } from '../chat/fake-upstream.js'
import { runCli } from '../helpers/cli.js'
import { startTestServer, tempDir } from '../helpers/server.js'
import { AUDD_KEY, LENS_KEY, startFakeSearch, type FakeSearch } from './fake-search.js'

let fake: FakeSearch
let chat: FakeUpstream
let dir: string
test.before(async () => {
  fake = await startFakeSearch()
  chat = await startFakeUpstream()
  dir = tempDir()
})
test.after(async () => {
  rmSync(dir, { recursive: true, force: true })
  await fake.close()
  await chat.close()
})

const providers = () => ({
  PLAZA_SEARCH_BASE_URL: `${fake.url}/searx`,
  PLAZA_CLIPS_BASE_URL: `${fake.url}/inv`,
  PLAZA_LENS_BASE_URL: `${fake.url}/serp`,
  PLAZA_LENS_API_KEY: LENS_KEY,
  PLAZA_AUDD_BASE_URL: `${fake.url}/audd`,
  PLAZA_AUDD_API_KEY: AUDD_KEY,
  PLAZA_LLM_BASE_URL: `${chat.url}/v1`,
  PLAZA_LLM_API_KEY: 'sk-cli-online-1234',
})
const plaza = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd: dir, env: { PLAZA_DATA_DIR: path.join(dir, '.plaza'), ...env } })

/** A short WAV of silence: enough for the fake AudD, which recognises any file of 100 bytes or more. */
function wav(): Buffer {
  const data = Buffer.alloc(1600)
  const header = Buffer.alloc(44)
  header.write('RIFF', 0, 'latin1')
  header.writeUInt32LE(36 + data.length, 4)
  header.write('WAVEfmt ', 8, 'latin1')
  header.writeUInt32LE(16, 16)
  header.writeUInt16LE(1, 20)
  header.writeUInt16LE(1, 22)
  header.writeUInt32LE(8000, 24)
  header.writeUInt32LE(16000, 28)
  header.writeUInt16LE(2, 32)
  header.writeUInt16LE(16, 34)
  header.write('data', 36, 'latin1')
  header.writeUInt32LE(data.length, 40)
  return Buffer.concat([header, data])
}

test('online embedded: the answer, then the numbered sources; --json is the API answer', async () => {
  chat.enqueue(reply({ pieces: ['It was on Tuesday [1].'] }), reply({ pieces: ['Per [2].'] }))
  const run = await plaza(['util', 'online', 'when was it', '--limit', '2'], providers())
  assert.is(run.code, 0, run.stderr)
  assert.equal(run.stdout.trim().split('\n'), ['It was on Tuesday [1].', '', 'Sources:', '[1] Latest on when was it — https://news.example/latest', '[2] Background reading — https://encyclopedia.example/wiki/Topic'])
  assert.match(chat.requests.at(-1)!.body.messages[1].content, /"n":2/)
  const asJson = await plaza(['util', 'online', 'x', '--json'], providers())
  assert.is(asJson.code, 0, asJson.stderr)
  const answer = JSON.parse(asJson.stdout)
  assert.equal([answer.answer, answer.cited, answer.model, answer.sources.length], ['Per [2].', [2], 'online', 5])
})

test('online failures: no gateway is exit 1 naming what to set; a bad limit is exit 2', async () => {
  const none = await plaza(['util', 'online', 'x'], { PLAZA_SEARCH_BASE_URL: `${fake.url}/searx` })
  assert.is(none.code, 1)
  assert.match(none.stderr, /chat gateway, which is not configured.*PLAZA_LLM_BASE_URL/)
  const limit = await plaza(['util', 'online', 'x', '--limit', '99'], providers())
  assert.is(limit.code, 2)
  assert.match(limit.stderr, /limit must be from 1 to 10/)
})

test('clips, lens and identify embedded: readable lines and --json', async () => {
  const clips = await plaza(['util', 'clips', 'cats', '-n', '2'], providers())
  assert.is(clips.code, 0, clips.stderr)
  assert.equal(clips.stdout.trim().split('\n'), ['cats explained (3:32, Explainer)', '  https://www.youtube.com/watch?v=dQw4w9WgXcQ', 'cats: live now (live, Live TV)', '  https://www.youtube.com/watch?v=live0000001'])

  const lens = await plaza(['util', 'lens', 'http://93.184.216.34/bridge.jpg', '--limit', '1', '--json'], providers())
  assert.is(lens.code, 0, lens.stderr)
  assert.equal(JSON.parse(lens.stdout).matches.map((m: { title: string }) => m.title), ['Golden Gate Bridge - Wikipedia'])
  const privateUrl = await plaza(['util', 'lens', 'http://127.0.0.1/x.jpg'], providers())
  assert.is(privateUrl.code, 1)
  assert.match(privateUrl.stderr, /private or loopback/)

  const byUrl = await plaza(['util', 'identify', 'http://93.184.216.34/song.mp3'], providers())
  assert.is(byUrl.code, 0, byUrl.stderr)
  assert.equal(byUrl.stdout.trim().split('\n').slice(0, 2), ['Imagine Dragons – Warriors (Warriors, 2014-09-18)', 'https://lis.tn/Warriors'])

  writeFileSync(path.join(dir, 'clip.wav'), wav())
  fake.requests.length = 0
  const byFile = await plaza(['util', 'identify', '--file', 'clip.wav', '--json'], providers())
  assert.is(byFile.code, 0, byFile.stderr)
  assert.is(JSON.parse(byFile.stdout).result.artist, 'Imagine Dragons')
  const sent = fake.requests.at(-1)!.form!.file as { bytes: Buffer }
  assert.ok(sent.bytes.equals(wav()))

  // A local file where the URL goes is sent as --file is.
  fake.requests.length = 0
  const positional = await plaza(['util', 'identify', 'clip.wav', '--json'], providers())
  assert.is(positional.code, 0, positional.stderr)
  assert.ok((fake.requests.at(-1)!.form!.file as { bytes: Buffer }).bytes.equals(wav()))
  const twice = await plaza(['util', 'identify', 'clip.wav', '--file', 'clip.wav'], providers())
  assert.is(twice.code, 2)
  assert.match(twice.stderr, /give the audio once/)

  const both = await plaza(['util', 'identify', 'http://93.184.216.34/a.mp3', '--file', 'clip.wav'], providers())
  assert.is(both.code, 2)
  const missing = await plaza(['util', 'identify', '--file', 'nope.wav'], providers())
  assert.is(missing.code, 2)
  assert.match(missing.stderr, /no such file/)
  const unconfigured = await plaza(['util', 'identify', 'http://93.184.216.34/a.mp3'])
  assert.is(unconfigured.code, 1)
  assert.match(unconfigured.stderr, /No audd provider is configured: set PLAZA_AUDD_API_KEY/)
})

test('remote: online, clips and identify --file ask the server, with its providers', async () => {
  const server = await startTestServer({ env: providers() })
  try {
    chat.enqueue(reply({ pieces: ['Remote [1].'] }))
    const online = await plaza(['util', 'online', 'remote question', '--json', '--url', server.url])
    assert.is(online.code, 0, online.stderr)
    assert.is(JSON.parse(online.stdout).answer, 'Remote [1].')
    const clips = await plaza(['util', 'clips', 'dogs', '--json', '--url', server.url])
    assert.is(clips.code, 0, clips.stderr)
    assert.is(JSON.parse(clips.stdout).clips[0].title, 'dogs explained')
    writeFileSync(path.join(dir, 'remote.wav'), wav())
    const identify = await plaza(['util', 'identify', '--file', 'remote.wav', '--url', server.url])
    assert.is(identify.code, 0, identify.stderr)
    assert.match(identify.stdout, /^Imagine Dragons – Warriors/)
    const refused = await plaza(['util', 'lens', 'http://10.0.0.1/x.jpg', '--url', server.url])
    assert.is(refused.code, 1)
    assert.match(refused.stderr, /private or loopback/)
  } finally {
    await server.close()
  }
})

test.run()
