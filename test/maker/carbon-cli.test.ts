import { spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, tempDir as makeTempDir } from '../helpers/server.js'
import { decode, hex, near } from '../codeimage/helpers.js'
import { CARBON_PALETTES } from '../../src/server/codeimage/carbon/themes.js'

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

test('embedded: a file to <name>.png with carbon options, language from the extension', async () => {
  const dir = tempDir()
  writeFileSync(path.join(dir, 'main.rs'), 'fn main() {\n    println!("hello");\n}\n')
  const run = await plaza(
    ['util', 'carbon', 'main.rs', '--theme', 'dracula', '--window-theme', 'sharp', '--background', '#ff0000', '--no-drop-shadow', '--padding-horizontal', '20px', '--padding-vertical', '10px', '--export-size', '1x', '--json'],
    { cwd: dir },
  )
  assert.is(run.code, 0, run.stderr)
  const result = JSON.parse(run.stdout)
  assert.is(result.output, 'main.png')
  assert.is(result.language, 'rust')
  assert.is(result.font, 'DejaVu Sans Mono')
  const image = await decode(readFileSync(path.join(dir, 'main.png')))
  assert.is(image.width, result.width)
  assert.equal({ ...image.pixel(0, 0), a: 0 }, { r: 255, g: 0, b: 0, a: 0 })
  assert.ok(near(image.pixel(20, 10), hex(CARBON_PALETTES.dracula.background), 1), 'sharp window corner at the padding')
})

test('embedded: standard input, 2x by default; -o names the output', async () => {
  const dir = tempDir()
  const one = await plaza(['util', 'carbon', '-', '--language', 'sql', '--export-size', '1x', '-o', 'one.png', '--json'], { cwd: dir, stdin: 'SELECT 1;' })
  const two = await plaza(['util', 'carbon', '-', '--language', 'sql', '-o', 'two.png', '--json'], { cwd: dir, stdin: 'SELECT 1;' })
  assert.is(one.code, 0, one.stderr)
  assert.is(two.code, 0, two.stderr)
  assert.is(JSON.parse(two.stdout).width, JSON.parse(one.stdout).width * 2)
  assert.is((await decode(readFileSync(path.join(dir, 'two.png')))).height, JSON.parse(one.stdout).height * 2)
})

test('bad input: one clear line and exit 1 (or 2 for a flag oclif refuses)', async () => {
  const dir = tempDir()
  const theme = await plaza(['util', 'carbon', '-', '--theme', 'rainbow'], { cwd: dir, stdin: 'x' })
  assert.is(theme.code, 1)
  assert.match(theme.stderr, /Unknown theme "rainbow"; valid themes: 3024-night/)
  const colour = await plaza(['util', 'carbon', '-', '--background', 'rgba(1,2,3'], { cwd: dir, stdin: 'x' })
  assert.is(colour.code, 1)
  assert.match(colour.stderr, /backgroundColor "rgba\(1,2,3" is not a colour/)
  const empty = await plaza(['util', 'carbon', '-'], { cwd: dir, stdin: '' })
  assert.is(empty.code, 1)
  assert.match(empty.stderr, /code is required/)
  const windowTheme = await plaza(['util', 'carbon', '-', '--window-theme', 'round'], { cwd: dir, stdin: 'x' })
  assert.is(windowTheme.code, 2)
  const missing = await plaza(['util', 'carbon', 'nope.ts'], { cwd: dir })
  assert.is(missing.code, 2)
  assert.match(missing.stderr, /cannot read nope\.ts: no such file/)
})

test('remote: POSTs to /api/carbon and writes what the server drew', async () => {
  const server = await startTestServer()
  try {
    const dir = tempDir()
    const run = await plaza(['util', 'carbon', '-', '--language', 'python', '--font-family', 'Fira Code', '--export-size', '1x', '--url', server.url, '--json'], { cwd: dir, stdin: 'print("hi")' })
    assert.is(run.code, 0, run.stderr)
    const result = JSON.parse(run.stdout)
    assert.is(result.font, 'Fira Code')
    assert.is(result.language, 'python')
    assert.is((await decode(readFileSync(path.join(dir, 'snippet.png')))).width, result.width)
    const refused = await plaza(['util', 'carbon', '-', '--theme', 'rainbow', '--url', server.url], { cwd: dir, stdin: 'x' })
    assert.is(refused.code, 1)
    assert.match(refused.stderr, /Unknown theme "rainbow"/)
  } finally {
    await server.close()
  }
})

test.run()
