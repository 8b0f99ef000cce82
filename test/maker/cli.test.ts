/** `plaza util meme`, `fakepost` and `logo`, run as the built binary (`npm run build` first; `npm test` does it): embedded and remote. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
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

const plaza = (args: string[], cwd: string) => runCli(args, { cwd, env: { PLAZA_DATA_DIR: path.join(cwd, '.plaza') } })

async function decode(file: string) {
  const { data, info } = await sharp(readFileSync(file)).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  return { data, info, at: (x: number, y: number) => [...data.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 3)] }
}

test('embedded meme: a template with captions, and an image of ones own; --json describes the file', async () => {
  const dir = tempDir()
  const run = await plaza(['util', 'meme', 'surprised', '--top', 'It works', '--bottom', 'Really', '--json'], dir)
  assert.is(run.code, 0, run.stderr)
  assert.equal(JSON.parse(run.stdout), { output: 'meme-surprised.png', width: 500, height: 500 })
  const meme = await decode(path.join(dir, 'meme-surprised.png'))
  let white = 0
  let black = 0
  for (let y = 10; y < 120; y++)
    for (let x = 0; x < 500; x++) {
      const p = meme.at(x, y)
      if (p.every((v) => v > 235)) white++
      if (p.every((v) => v < 40)) black++
    }
  assert.ok(white > 200 && black > 200, `${white} ${black}`)

  writeFileSync(path.join(dir, 'red.png'), await sharp({ create: { width: 400, height: 400, channels: 3, background: '#dd2222' } }).png().toBuffer())
  const own = await plaza(['util', 'meme', '--image', 'red.png', '--top', 'Red', '-o', 'red-meme.png'], dir)
  assert.is(own.code, 0, own.stderr)
  assert.is(own.stdout.trim(), 'red-meme.png')
  const red = await decode(path.join(dir, 'red-meme.png'))
  assert.equal(red.at(200, 200), [0xdd, 0x22, 0x22])
})

test('embedded fakepost and logo; bad input is a usage error (exit 2) and writes nothing', async () => {
  const dir = tempDir()
  const post = await plaza(['util', 'fakepost', '--username', 'ada', '--text', 'Hello 🌍', '--dark', '--verified', '--json'], dir)
  assert.is(post.code, 0, post.stderr)
  const out = JSON.parse(post.stdout)
  assert.is(out.output, 'fakepost-ada.png')
  assert.is(out.width, 1200)
  assert.equal((await decode(path.join(dir, 'fakepost-ada.png'))).at(2, 2), [0, 0, 0])

  const logo = await plaza(['util', 'logo', 'Acme', '--style', 'badge', '--color', 'red', '--size', '128', '--json'], dir)
  assert.is(logo.code, 0, logo.stderr)
  assert.equal(JSON.parse(logo.stdout).height, 128)
  const badge = await decode(path.join(dir, 'logo-acme-badge.png'))
  assert.equal(badge.at(20, 64), [255, 0, 0])

  const bad = await plaza(['util', 'logo', 'Acme', '--color', 'notacolour'], dir)
  assert.is(bad.code, 2, bad.stderr)
  assert.match(bad.stderr, /color must be a colour/)
  const unknown = await plaza(['util', 'meme', 'nope', '--top', 'x'], dir)
  assert.is(unknown.code, 2)
  assert.match(unknown.stderr, /template must be one of: this-is-fine/)
})

test('remote: asks the server (GET), the same picture as embedded', async () => {
  const server = await startTestServer()
  try {
    const dir = tempDir()
    const remote = await plaza(['util', 'logo', 'Plaza', '--style', 'neon', '-o', 'remote.png', '--url', server.url, '--json'], dir)
    assert.is(remote.code, 0, remote.stderr)
    const local = await plaza(['util', 'logo', 'Plaza', '--style', 'neon', '-o', 'local.png'], dir)
    assert.is(local.code, 0, local.stderr)
    const [a, b] = await Promise.all([decode(path.join(dir, 'remote.png')), decode(path.join(dir, 'local.png'))])
    assert.ok(Buffer.compare(a.data, b.data) === 0)
    // A local picture goes to the server first (POST /api/files): the same meme as embedded.
    const sent = await plaza(['util', 'meme', '--image', 'local.png', '--top', 'x', '-o', 'meme-remote.png', '--url', server.url], dir)
    assert.is(sent.code, 0, sent.stderr)
    const here = await plaza(['util', 'meme', '--image', 'local.png', '--top', 'x', '-o', 'meme-here.png'], dir)
    assert.is(here.code, 0, here.stderr)
    const [sentMeme, hereMeme] = await Promise.all([decode(path.join(dir, 'meme-remote.png')), decode(path.join(dir, 'meme-here.png'))])
    assert.ok(Buffer.compare(sentMeme.data, hereMeme.data) === 0)
    const avatar = await plaza(['util', 'fakepost', '--text', 'hello', '--name', 'Ann', '--username', 'ann', '--avatar', 'local.png', '-o', 'post.png', '--url', server.url], dir)
    assert.is(avatar.code, 0, avatar.stderr)
    const missing = await plaza(['util', 'meme', '--image', 'nowhere.png', '--top', 'x', '--url', server.url], dir)
    assert.is(missing.code, 2)
    assert.match(missing.stderr, /cannot read nowhere\.png: no such file/)
  } finally {
    await server.close()
  }
})

test.run()
