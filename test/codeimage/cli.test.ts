import { spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, tempDir as makeTempDir } from '../helpers/server.js'
import { CODE_FONTS } from '../../src/shared/schemas/codeimage.js'
import { WINDOW } from '../../src/server/codeimage/scene.js'
import { decode, differs, hex, near, offLinePixels } from './helpers.js'

const BIN = path.resolve('bin/run.js')

const dirs: string[] = []
const tempDir = () => {
  const dir = makeTempDir()
  dirs.push(dir)
  return dir
}
test.after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

/** Runs the built CLI (`npm run build` first; `npm test` does it). */
function plaza(args: string[], options: { cwd: string; stdin?: string }) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env: { ...process.env, PLAZA_URL: '', NO_COLOR: '1' } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.stdin ?? '')
  })
}

test('embedded: renders a file to <name>.png, language from the extension, title from the name', async () => {
  const dir = tempDir()
  writeFileSync(path.join(dir, 'main.rs'), 'fn main() {\n    println!("hello");\n}\n')
  const run = await plaza(['util', 'codeimage', 'main.rs', '--line-numbers', '--json'], { cwd: dir })
  assert.is(run.code, 0, run.stderr)
  const result = JSON.parse(run.stdout)
  assert.is(result.output, 'main.png')
  assert.is(result.language, 'rust')
  const image = await decode(readFileSync(path.join(dir, 'main.png')))
  assert.is(image.width, result.width)
  assert.is(image.height, result.height)
})

test('embedded: reads standard input and writes SVG where -o says', async () => {
  const dir = tempDir()
  const run = await plaza(['util', 'codeimage', '-', '--language', 'sql', '--format', 'svg', '-o', 'q.svg'], { cwd: dir, stdin: 'SELECT 1;' })
  assert.is(run.code, 0, run.stderr)
  assert.match(readFileSync(path.join(dir, 'q.svg'), 'utf8'), /^<svg /)
})

test('bad input: a clear message and a non-zero exit', async () => {
  const dir = tempDir()
  const missing = await plaza(['util', 'codeimage', 'nope.ts'], { cwd: dir })
  assert.is(missing.code, 2)
  assert.match(missing.stderr, /cannot read nope\.ts: no such file/)
  const empty = await plaza(['util', 'codeimage', '-'], { cwd: dir, stdin: '' })
  assert.is(empty.code, 1)
  assert.match(empty.stderr, /codeSnippet is required/)
})

test('remote: POSTs to /api/codeimage and writes what the server drew', async () => {
  const server = await startTestServer()
  try {
    const dir = tempDir()
    writeFileSync(path.join(dir, 'app.py'), 'def greet(name):\n    return f"hi {name}"\n')
    const run = await plaza(['util', 'codeimage', 'app.py', '--url', server.url, '--light', '--theme', 'ice', '--scale', '1', '--json'], { cwd: dir })
    assert.is(run.code, 0, run.stderr)
    const result = JSON.parse(run.stdout)
    assert.is(result.language, 'python')
    const image = await decode(readFileSync(path.join(dir, 'app.png')))
    assert.is(image.width, result.width)
    const bad = await plaza(['util', 'codeimage', 'app.py', '--url', server.url, '--language', 'klingon'], { cwd: dir })
    assert.is(bad.code, 1)
    assert.match(bad.stderr, /Unknown language "klingon"/)
    // A local picture goes to the server first (POST /api/files), and the render reads it from there.
    const wall = await (await import('sharp')).default({ create: { width: 64, height: 48, channels: 3, background: '#00c000' } }).png().toBuffer()
    writeFileSync(path.join(dir, 'wall.png'), wall)
    const local = await plaza(['util', 'codeimage', 'app.py', '--url', server.url, '--scale', '1', '--background-image', 'wall.png', '-o', 'walled.png'], { cwd: dir })
    assert.is(local.code, 0, local.stderr)
    assert.ok(near((await decode(readFileSync(path.join(dir, 'walled.png')))).pixel(2, 2), hex('#00c000'), 8))
    const missing = await plaza(['util', 'codeimage', 'app.py', '--url', server.url, '--background-image', 'nowhere.png'], { cwd: dir })
    assert.is(missing.code, 2)
    assert.match(missing.stderr, /cannot read nowhere\.png: no such file/)
    const byUrl = await plaza(['util', 'codeimage', 'app.py', '--url', server.url, '--background-image', 'https://example.com/wall.png'], { cwd: dir })
    assert.is(byUrl.code, 2)
    assert.match(byUrl.stderr, /--background-image takes an image file, or the uploads\/\.\.\. path of one stored on the server/)
    const absent = await plaza(['util', 'codeimage', 'app.py', '--url', server.url, '--background-image', 'uploads/codeimages/AAAAAAAAAAAAAAAAAAAAAAAA.png'], { cwd: dir })
    assert.is(absent.code, 1)
    assert.match(absent.stderr, /backgroundImage: no such file on this server/)
  } finally {
    await server.close()
  }
})

/**
 * The server the flag tests draw on: the flags are the same either way (the tests above cover the
 * embedded path), and a server keeps its renderer loaded where each embedded run loads its own.
 */
let drawing: Awaited<ReturnType<typeof startTestServer>> | undefined
test.after(() => drawing?.close())

/** Renders `code` from standard input with `flags` (on the `drawing` server), and decodes the PNG. */
async function draw(code: string, flags: string[]) {
  drawing ??= await startTestServer()
  const dir = tempDir()
  const run = await plaza(['util', 'codeimage', '-', '-o', 'out.png', '--json', '--url', drawing.url, ...flags], { cwd: dir, stdin: code })
  assert.is(run.code, 0, run.stderr)
  return { ...(await decode(readFileSync(path.join(dir, 'out.png')))), language: JSON.parse(run.stdout).language as string }
}

test('a one-liner is detected and coloured; Hangul draws its glyphs', async () => {
  const flags = ['--no-background', '--padding', '16', '--scale', '1']
  const area = (img: { width: number; height: number }) => ({ x: 20, y: 16 + WINDOW.header, w: img.width - 40, h: img.height - 36 - WINDOW.header })
  const detected = await draw('console.log(42)', flags)
  assert.is(detected.language, 'javascript')
  const coloured = offLinePixels(detected, hex('#161616'), hex('#FFFFFF'), area(detected))
  assert.ok(coloured > 20, `${coloured} pixels in colour`)
  const plain = await draw('console.log(42)', [...flags, '--language', 'text'])
  assert.ok(offLinePixels(plain, hex('#161616'), hex('#FFFFFF'), area(plain)) < 3)
  const missing = await draw('\u{10FFFD}', [...flags, '--language', 'text'])
  const han = await draw('한', [...flags, '--language', 'text'])
  const geul = await draw('글', [...flags, '--language', 'text'])
  assert.ok(differs(han, missing) && differs(geul, missing) && differs(han, geul))
})

test('--scale 6 doubles --scale 3; --font picks each bundled font', async () => {
  const x3 = await draw('let x = 5;', ['--scale', '3'])
  const x6 = await draw('let x = 5;', ['--scale', '6'])
  assert.is(x6.width, 2 * x3.width)
  assert.is(x6.height, 2 * x3.height)
  const fonts = []
  for (const font of CODE_FONTS) fonts.push(await draw('const answer = 42', ['--scale', '1', '--font', font]))
  for (let i = 1; i < fonts.length; i++) assert.ok(differs(fonts[0], fonts[i]), CODE_FONTS[i])
})

test('--no-window-controls, --background-color, --background-image and --no-wrap', async () => {
  const P = 32
  const bare = await draw('let x = 5;', ['--scale', '1', '--padding', String(P), '--no-window-controls', '--background-color', '#123456', '--title', 'x.ts'])
  assert.ok(near(bare.pixel(1, 1), hex('#123456'), 2))
  WINDOW.controls.forEach((color, i) => assert.not.ok(near(bare.pixel(P + 22 + i * 20, P + WINDOW.header / 2), hex(color), 60)))
  // With neither controls nor a title (standard input has no file name) there is no bar at all.
  const barless = await draw('let x = 5;', ['--scale', '1', '--padding', String(P), '--no-window-controls', '--background-color', '#123456'])
  assert.is(bare.height - barless.height, WINDOW.header - WINDOW.bottom)
  const dir = tempDir()
  const picture = await (await import('sharp')).default({ create: { width: 64, height: 48, channels: 3, background: '#00c000' } }).png().toBuffer()
  writeFileSync(path.join(dir, 'green.png'), picture)
  const run = await plaza(['util', 'codeimage', '-', '-o', 'out.png', '--scale', '1', '--background-image', 'green.png'], { cwd: dir, stdin: 'let x = 5;' })
  assert.is(run.code, 0, run.stderr)
  const pictured = await decode(readFileSync(path.join(dir, 'out.png')))
  assert.ok(near(pictured.pixel(2, 2), hex('#00c000'), 8))
  writeFileSync(path.join(dir, 'notes.txt'), 'not a picture')
  const bad = await plaza(['util', 'codeimage', '-', '--background-image', 'notes.txt'], { cwd: dir, stdin: 'let x = 5;' })
  assert.is(bad.code, 2)
  assert.match(bad.stderr, /--background-image: not an image/)
  const long = `const s = "${'x'.repeat(200)}"`
  const wrapped = await draw(long, ['--scale', '1'])
  const whole = await draw(long, ['--scale', '1', '--no-wrap'])
  assert.ok(wrapped.width <= 1320)
  assert.ok(whole.width > 1600)
})

test.run()
