import { spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, tempDir as makeTempDir } from '../helpers/server.js'
import { decode } from './helpers.js'

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
  } finally {
    await server.close()
  }
})

test.run()
