/** `plaza util fx`, `expand` and `upscale`, run as the built binary (`npm run build` first; `npm test` does it): embedded and remote. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
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

/** Red left half, white right half. */
async function halves(width = 120, height = 80): Promise<Buffer> {
  const left = await sharp({ create: { width: width / 2, height, channels: 3, background: { r: 230, g: 20, b: 20 } } }).png().toBuffer()
  return sharp({ create: { width, height, channels: 3, background: '#ffffff' } }).composite([{ input: left, left: 0, top: 0 }]).png().toBuffer()
}

async function servePng(body: Buffer) {
  const host = http.createServer((_req, res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(body))
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(host.address() as AddressInfo).port}/pics/halves.png`, close: () => new Promise((resolve) => host.close(resolve)) }
}

test('embedded: fx on a local file writes <name>-<effect>.png; by number too; --json describes it', async () => {
  const dir = tempDir()
  writeFileSync(path.join(dir, 'halves.png'), await halves())
  const run = await plaza(['util', 'fx', 'halves.png', 'grayscale', '--json'], dir)
  assert.is(run.code, 0, run.stderr)
  assert.equal(JSON.parse(run.stdout), { output: 'halves-grayscale.png', format: 'png', width: 120, height: 80 })
  const { data } = await sharp(readFileSync(path.join(dir, 'halves-grayscale.png'))).raw().toBuffer({ resolveWithObject: true })
  assert.ok(data[0] === data[1] && data[1] === data[2])
  const byNumber = await plaza(['util', 'fx', 'halves.png', '3', '-o', 'neg.png'], dir)
  assert.is(byNumber.code, 0, byNumber.stderr)
  assert.is(byNumber.stdout.trim(), 'neg.png')
  const { data: neg } = await sharp(readFileSync(path.join(dir, 'neg.png'))).raw().toBuffer({ resolveWithObject: true })
  assert.equal([...neg.subarray(0, 3)], [25, 235, 235])
})

test('embedded: expand to 16:9 and upscale 4x', async () => {
  const dir = tempDir()
  writeFileSync(path.join(dir, 'halves.png'), await halves())
  const wide = await plaza(['util', 'expand', 'halves.png', '16:9', '--json'], dir)
  assert.is(wide.code, 0, wide.stderr)
  assert.equal(JSON.parse(wide.stdout), { output: 'halves-16x9.png', format: 'png', width: 142, height: 80 })
  const big = await plaza(['util', 'upscale', 'halves.png', '--scale', '4', '--json'], dir)
  assert.is(big.code, 0, big.stderr)
  const meta = await sharp(readFileSync(path.join(dir, 'halves-4x.png'))).metadata()
  assert.equal([meta.width, meta.height], [480, 320])
})

test('embedded: a URL goes through the fetch guard (refused on loopback unless PLAZA_FETCH_ALLOW_PRIVATE=1)', async () => {
  const dir = tempDir()
  const host = await servePng(await halves())
  try {
    const refused = await plaza(['util', 'fx', host.url, 'sepia'], dir)
    assert.is(refused.code, 1)
    assert.match(refused.stderr, /127\.0\.0\.1 is a private or loopback address/)
    const allowed = await plaza(['util', 'fx', host.url, 'sepia', '--json'], dir, { PLAZA_FETCH_ALLOW_PRIVATE: '1' })
    assert.is(allowed.code, 0, allowed.stderr)
    assert.is(JSON.parse(allowed.stdout).output, 'halves-sepia.png')
  } finally {
    await host.close()
  }
})

test('remote: the server fetches the URL, or receives a local file as the POST form, and the CLI writes its answer', async () => {
  const dir = tempDir()
  const host = await servePng(await halves())
  const server = await startTestServer({ env: { PLAZA_FETCH_ALLOW_PRIVATE: '1' } })
  try {
    const run = await plaza(['util', 'upscale', host.url, '--url', server.url, '-o', 'up.png', '--json'], dir)
    assert.is(run.code, 0, run.stderr)
    assert.equal(JSON.parse(run.stdout), { output: 'up.png', format: 'png', width: 240, height: 160 })
    assert.is((await sharp(readFileSync(path.join(dir, 'up.png'))).metadata()).width, 240)
    const bad = await plaza(['util', 'fx', host.url, 'glitter', '--url', server.url], dir)
    assert.is(bad.code, 1)
    assert.match(bad.stderr, /effect must be one of/)
    writeFileSync(path.join(dir, 'local.png'), await halves())
    writeFileSync(path.join(dir, 'notes.txt'), 'plain words')
    const local = await plaza(['util', 'fx', 'local.png', '3', '--url', server.url, '--json'], dir)
    assert.is(local.code, 0, local.stderr)
    assert.equal(JSON.parse(local.stdout), { output: 'local-3.png', format: 'png', width: 120, height: 80 })
    const { data } = await sharp(readFileSync(path.join(dir, 'local-3.png'))).raw().toBuffer({ resolveWithObject: true })
    assert.equal([...data.subarray(0, 3)], [25, 235, 235])
    const notImage = await plaza(['util', 'expand', 'notes.txt', '16:9', '--url', server.url], dir)
    assert.is(notImage.code, 1)
    assert.match(notImage.stderr, /file: not an image Plaza reads/)
  } finally {
    await server.close()
    await host.close()
  }
})

test('bad input: unknown effect, bad ratio, missing file, not an image; nothing written', async () => {
  const dir = tempDir()
  writeFileSync(path.join(dir, 'halves.png'), await halves())
  writeFileSync(path.join(dir, 'notes.png'), 'not an image at all')
  const cases: Array<[string[], number, RegExp]> = [
    [['util', 'fx', 'halves.png', 'glitter'], 2, /effect must be one of: grayscale/],
    [['util', 'fx', 'halves.png', '99'], 2, /effectIndex must be from 1 to 30/],
    [['util', 'expand', 'halves.png', '16:0'], 2, /ratio must be W:H/],
    [['util', 'fx', 'nope.png', 'sepia'], 2, /cannot read nope\.png: no such file/],
    [['util', 'fx', 'notes.png', 'sepia'], 1, /notes\.png: not an image Plaza reads/],
    [['util', 'upscale', 'halves.png', '--scale', '3'], 2, /Expected --scale=3 to be one of: 2, 4/],
  ]
  for (const [args, code, message] of cases) {
    const run = await plaza(args, dir)
    assert.is(run.code, code, `${args.join(' ')}: ${run.stderr}`)
    assert.match(run.stderr, message)
  }
  assert.not.ok(existsSync(path.join(dir, 'halves-glitter.png')))
  assert.not.ok(existsSync(path.join(dir, 'notes-sepia.png')))
})

test.run()
