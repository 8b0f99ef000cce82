/** `plaza util imagine` and `plaza util weather`, run as the built binary (`npm run build` first): embedded and remote, against loopback providers. */
import { readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runCli } from '../helpers/cli.js'
import { startTestServer, tempDir as makeTempDir } from '../helpers/server.js'
import { colourOf, json, startFakeProviders, type FakeProviders } from '../providers/fake-providers.js'

const dirs: string[] = []
const tempDir = () => {
  const dir = makeTempDir()
  dirs.push(dir)
  return dir
}
let fake: FakeProviders
test.before(async () => void (fake = await startFakeProviders()))
test.after(async () => {
  dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }))
  await fake.close()
})

const providers = () => ({ PLAZA_IMAGES_BASE_URL: `${fake.url}/a1111`, PLAZA_IMAGES_PROTOCOL: 'automatic1111', PLAZA_WEATHER_BASE_URL: fake.url, PLAZA_WEATHER_GEOCODING_URL: fake.url })
const plaza = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd, env: { PLAZA_DATA_DIR: path.join(cwd, '.plaza'), ...env } })

async function colourAt(file: string) {
  const { data, info } = await sharp(readFileSync(file)).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  return { size: [info.width, info.height], colour: [...data.subarray(0, 3)] }
}

test('embedded imagine: the provider of this environment draws; the file is named from the prompt; --json describes it', async () => {
  const dir = tempDir()
  const run = await plaza(['util', 'imagine', 'A lighthouse, at dusk!', '--size', '96x64', '--json'], dir, providers())
  assert.is(run.code, 0, run.stderr)
  assert.equal(JSON.parse(run.stdout), { output: 'imagine-a-lighthouse-at-dusk.png', model: 'flux-schnell', format: 'png', width: 96, height: 64 })
  assert.equal(await colourAt(path.join(dir, 'imagine-a-lighthouse-at-dusk.png')), { size: [96, 64], colour: colourOf('A lighthouse, at dusk!') })
  const human = await plaza(['util', 'imagine', 'fox', '-m', 'sdxl', '-o', 'fox.png'], dir, providers())
  assert.is(human.code, 0, human.stderr)
  assert.is(human.stdout.trim(), 'fox.png')
})

test('remote imagine: the server’s provider, not this environment’s', async () => {
  const server = await startTestServer({ env: providers() })
  try {
    const dir = tempDir()
    const run = await plaza(['util', 'imagine', 'castle', '-o', 'c.png', '--url', server.url, '--json'], dir)
    assert.is(run.code, 0, run.stderr)
    assert.equal(JSON.parse(run.stdout), { output: 'c.png', model: 'flux-schnell', format: 'png', width: 64, height: 48 })
    assert.equal((await colourAt(path.join(dir, 'c.png'))).colour, colourOf('castle'))
  } finally {
    await server.close()
  }
})

test('imagine failures: no provider is exit 1 naming what to set; a bad model is exit 2; an upstream failure one line', async () => {
  const dir = tempDir()
  const none = await plaza(['util', 'imagine', 'x'], dir)
  assert.is(none.code, 1)
  assert.match(none.stderr, /^Error: No images provider is configured: set PLAZA_IMAGES_BASE_URL/)
  const model = await plaza(['util', 'imagine', 'x', '--model', 'midjourney'], dir, providers())
  assert.is(model.code, 2)
  assert.match(model.stderr, /model must be one of/)
  const down = await plaza(['util', 'imagine', 'x'], dir, { ...providers(), PLAZA_IMAGES_BASE_URL: 'http://127.0.0.1:9/a1111' })
  assert.is(down.code, 1)
  assert.match(down.stderr, /images provider env \(automatic1111\) could not be reached/)
  assert.is(down.stderr.trim().split('\n').length, 1)
})

test('weather embedded: a readable forecast; --json is the API answer; an unknown place exits 1', async () => {
  const dir = tempDir()
  const run = await plaza(['util', 'weather', 'Berlin'], dir, providers())
  assert.is(run.code, 0, run.stderr)
  const lines = run.stdout.trim().split('\n')
  assert.is(lines[0], 'Berlin, Germany (52.52, 13.41, Europe/Berlin)')
  assert.is(lines[1], 'Now: Moderate rain, 4°C (feels like 1°C), humidity 81%, wind 15 km/h W')
  assert.is(lines.length, 3 + 7)
  assert.match(lines[3], /^2026-11-23 {2}-1…6°C +0 mm +Clear sky$/)
  const asJson = await plaza(['util', 'weather', 'reykjavik', '--units', 'imperial', '--json'], dir, providers())
  assert.is(asJson.code, 0, asJson.stderr)
  const answer = JSON.parse(asJson.stdout)
  assert.equal([answer.location.name, answer.units.temperature, answer.current.temperature, answer.daily.length], ['Reykjavík', '°F', 39, 7])
  const unknown = await plaza(['util', 'weather', 'Atlantis'], dir, providers())
  assert.is(unknown.code, 1)
  assert.match(unknown.stderr, /no place called "Atlantis"/)
  const units = await plaza(['util', 'weather', 'Berlin', '--units', 'kelvin'], dir, providers())
  assert.is(units.code, 2)
})

test('weather remote: asks the server', async () => {
  const server = await startTestServer({ env: providers() })
  try {
    fake.enqueue(json(200, { results: [{ name: 'Somewhere', country: 'Nowhere', latitude: 1.5, longitude: 2.5, timezone: 'UTC' }] }))
    const run = await plaza(['util', 'weather', 'Somewhere', '--url', server.url, '--json'], tempDir())
    assert.is(run.code, 0, run.stderr)
    assert.equal(JSON.parse(run.stdout).location, { name: 'Somewhere', country: 'Nowhere', latitude: 1.5, longitude: 2.5, timezone: 'UTC' })
  } finally {
    await server.close()
  }
})

test.run()
