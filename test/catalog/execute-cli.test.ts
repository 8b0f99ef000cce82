/**
 * `plaza util run` (the built binary: `npm run build` first; `npm test` does it): embedded and
 * remote, the program's output on stdout and stderr and its exit code as the command's.
 */
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runCli } from '../helpers/cli.js'
import { startTestServer, tempDir } from '../helpers/server.js'

const dir = tempDir('plaza-run-')
test.after(() => rmSync(dir, { recursive: true, force: true }))

const file = (name: string, text: string) => {
  writeFileSync(path.join(dir, name), text)
  return name
}

test('embedded: a Python file, language from its extension, stdin from a file, its exit code passed through', async () => {
  file('input.txt', 'world\n')
  file('hello.py', 'import sys\nprint("hello", input())\nprint("to stderr", file=sys.stderr)\nsys.exit(3)\n')
  const run = await runCli(['util', 'run', 'hello.py', '--stdin', 'input.txt'], { cwd: dir })
  assert.is(run.code, 3, run.stderr)
  assert.is(run.stdout, 'hello world\n')
  assert.is(run.stderr, 'to stderr\n')
})

test('embedded: JavaScript from standard input with --json; an uncaught exception exits 1', async () => {
  const ok = await runCli(['util', 'run', '-', '--language', 'js', '--json'], { cwd: dir, input: 'console.log(6 * 7)' })
  assert.is(ok.code, 0, ok.stderr)
  const answer = JSON.parse(ok.stdout)
  assert.is(answer.stdout, '42\n')
  assert.is(answer.language, 'javascript')
  assert.is(answer.timed_out, false)
  const thrown = await runCli(['util', 'run', file('boom.js', 'throw new Error("boom")')], { cwd: dir })
  assert.is(thrown.code, 1)
  assert.match(thrown.stderr, /Uncaught Error: boom/)
})

test('remote: POSTs to /api/execute; the server\'s refusals are one line and exit 1', async () => {
  const server = await startTestServer()
  try {
    const run = await runCli(['util', 'run', file('sum.js', 'console.log(readline().split(" ").map(Number).reduce((a, b) => a + b))'), '--stdin', file('nums.txt', '1 2 3\n'), '--url', server.url], { cwd: dir })
    assert.is(run.code, 0, run.stderr)
    assert.is(run.stdout, '6\n')
    const rust = await runCli(['util', 'run', file('main.rs', 'fn main() {}'), '--url', server.url], { cwd: dir })
    assert.is(rust.code, 1)
    assert.match(rust.stderr, /^Error: .*PLAZA_PISTON_BASE_URL\n$/)
  } finally {
    await server.close()
  }
})

test('usage: an unknown extension without --language, a missing file', async () => {
  const unknown = await runCli(['util', 'run', file('notes.txt', 'hi')], { cwd: dir })
  assert.is(unknown.code, 2)
  assert.match(unknown.stderr, /cannot tell the language of notes\.txt/)
  const missing = await runCli(['util', 'run', 'nope.py'], { cwd: dir })
  assert.is(missing.code, 2)
  assert.match(missing.stderr, /cannot read nope\.py: no such file/)
})

test.run()
