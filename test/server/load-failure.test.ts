/**
 * A serving process that fails to load a module (the installation changed under it, as `npm ci`
 * does while `npm start` runs) answers 503 and makes way for a fresh process: the cluster's primary
 * replaces the worker, a single process exits 1 for its supervisor. The serving tests run `plaza
 * serve` from a copy of the built installation with one lazily loaded module gone.
 */
import { cpSync, mkdirSync, readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { TRPCError } from '@trpc/server'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { RESTARTING_MESSAGE, toPublicError } from '../../src/server/errors.js'
import { isModuleLoadError, onLoadFailure } from '../../src/server/load-failure.js'
import { WorkerPool } from '../../src/server/workers/pool.js'
import { ROOT, startServe } from '../helpers/cli.js'
import { tempDir } from '../helpers/server.js'

/** What a real failed import throws. */
async function importError(specifier: string): Promise<unknown> {
  try {
    await import(specifier)
  } catch (error) {
    return error
  }
  throw new Error(`${specifier} loaded`)
}

test('isModuleLoadError: a missing module or dependency, a link against a changed module, and those as causes; not a JSON SyntaxError', async () => {
  const dir = tempDir()
  writeFileSync(path.join(dir, 'a.mjs'), "import { gone } from './b.mjs'\nexport const a = gone\n")
  writeFileSync(path.join(dir, 'b.mjs'), 'export const kept = 1\n')
  writeFileSync(path.join(dir, 'c.mjs'), "import './missing.mjs'\n")
  const missing = await importError(pathToFileURL(path.join(dir, 'nothing-here.mjs')).href)
  const mismatch = await importError(pathToFileURL(path.join(dir, 'a.mjs')).href)
  const dependency = await importError(pathToFileURL(path.join(dir, 'c.mjs')).href)
  assert.is((missing as NodeJS.ErrnoException).code, 'ERR_MODULE_NOT_FOUND')
  assert.is((mismatch as Error).name, 'SyntaxError')
  for (const error of [missing, mismatch, dependency, new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: missing as Error })]) {
    assert.ok(isModuleLoadError(error), String(error))
  }
  let json: unknown
  try {
    JSON.parse('{')
  } catch (error) {
    json = error
  }
  for (const error of [json, new Error('boom'), Object.assign(new Error('no file'), { code: 'ENOENT' }), null, 'text']) assert.not.ok(isModuleLoadError(error), String(error))
})

test('a pool worker whose module is gone fails its job with an error that says so', async () => {
  const dir = tempDir()
  // The pool starts `<name>.js` beside its base; there is none.
  const pool = new WorkerPool<number, number>(pathToFileURL(path.join(dir, 'base.js')).href, 'worker', { size: 1, timeoutMs: 60_000, queueLimit: 1 }, {
    shuttingDown: 'closing',
    busy: 'busy',
    overran: () => 'slow',
    worker: 'test',
  })
  try {
    const failure = await pool.run(1).then(
      () => null,
      (error: unknown) => error,
    )
    assert.ok(isModuleLoadError(failure), String(failure))
  } finally {
    await pool.close()
  }
})

test('a job whose module fails to load inside a pool worker carries the code to the caller', async () => {
  const dir = tempDir()
  const poolModule = pathToFileURL(path.join(ROOT, 'src/server/workers/pool.ts')).href
  writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}')
  writeFileSync(
    path.join(dir, 'worker.ts'),
    `import { parentPort } from 'node:worker_threads'
import { serveJobs } from ${JSON.stringify(poolModule)}
serveJobs(parentPort!, () => import('./gone.js'), { transfer: () => [], refusal: () => null })
`,
  )
  const pool = new WorkerPool<number, unknown>(pathToFileURL(path.join(dir, 'base.ts')).href, 'worker', { size: 1, timeoutMs: 60_000, queueLimit: 1 }, {
    shuttingDown: 'closing',
    busy: 'busy',
    overran: () => 'slow',
    worker: 'test',
  })
  try {
    const failure = await pool.run(1).then(
      () => null,
      (error: unknown) => error,
    )
    assert.match(String(failure), /gone\.js/, String(failure))
    assert.ok(isModuleLoadError(failure), String(failure))
  } finally {
    await pool.close()
  }
})

test('toPublicError: a load failure is a 503 to retry shortly, and the process hears of it once', async () => {
  const heard: unknown[] = []
  const stop = onLoadFailure((error) => heard.push(error))
  const missing = await importError('./definitely-not-here.js')
  assert.equal(toPublicError(missing), { status: 503, code: 'SERVICE_UNAVAILABLE', message: RESTARTING_MESSAGE, retryAfter: 1, unexpected: true })
  assert.is(toPublicError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: missing as Error })).status, 503)
  assert.equal(heard, [missing])
  // A listener that comes later still hears it.
  const late: unknown[] = []
  onLoadFailure((error) => late.push(error))()
  assert.equal(late, [missing])
  stop()
})

/**
 * A copy of the built installation (bin, dist, the manifest, the migrations; node_modules linked)
 * whose `dist/` module `relative` is moved aside, as an install in progress leaves it. Returns its
 * `bin/run.js` and the function that puts the module back.
 */
function brokenInstall(relative: string): { bin: string; restore: () => void } {
  const root = tempDir('plaza-install-')
  for (const part of ['bin', 'dist', 'package.json', 'oclif.manifest.json', 'src/server/db/migrations']) {
    mkdirSync(path.dirname(path.join(root, part)), { recursive: true })
    // Copies, never links (the suite's ROOT links dist/ to the repository's, test/compile.ts): the module moved aside is this copy's.
    cpSync(path.join(ROOT, part), path.join(root, part), { recursive: true, dereference: true })
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'))
  const file = path.join(root, 'dist', relative)
  renameSync(file, file + '.gone')
  return { bin: path.join(root, 'bin/run.js'), restore: () => renameSync(file + '.gone', file) }
}

/** Resolves with the first match of `pattern` in what the server wrote, now or later. */
function untilOutput(child: { stderr: NodeJS.ReadableStream | null }, output: () => string, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve) => {
    const check = () => {
      const match = pattern.exec(output())
      if (!match) return false
      child.stderr!.off('data', onData)
      resolve(match)
      return true
    }
    // After the helper's own listener has appended the chunk.
    const onData = () => setImmediate(check)
    child.stderr!.on('data', onData)
    check()
  })
}

/** A code image's request, on a connection of its own (so that successive ones go to the workers in turn). */
const snippet = (): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ codeSnippet: 'const x = 1', language: 'javascript' }) })

test('--workers 2: the worker that cannot load a module answers 503, finishes and is replaced; the fresh one serves', async () => {
  const { bin, restore } = brokenInstall('server/codeimage/validate.js')
  const { child, url, exited, output } = await startServe(['--port', '0', '--data-dir', tempDir(), '--workers', '2', '--no-rate-limits'], { PLAZA_CODEIMAGE_WORKERS: '1' }, { bin })
  const failed = await fetch(`${url}/api/codeimage`, snippet())
  assert.is(failed.status, 503)
  assert.is(failed.headers.get('retry-after'), '1')
  assert.is(((await failed.json()) as { message: string }).message, RESTARTING_MESSAGE)
  const [, victim] = await untilOutput(child, output, /"message":"a module failed to load[^"]*the primary starts a fresh one","pid":(\d+)/)
  await untilOutput(child, output, new RegExp(`"message":"server worker retired","pid":${victim},"code":1`))
  await untilOutput(child, output, /"message":"server worker replaced"/)
  assert.not.ok(readdirSync('/proc').includes(victim), 'the worker that failed is gone')
  // The installation is whole again: every worker (the fresh one, and the other, which never tried) renders.
  restore()
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${url}/api/codeimage`, snippet())
    assert.is(res.status, 200)
    assert.is(res.headers.get('content-type'), 'image/png')
    await res.arrayBuffer()
  }
  child.kill('SIGTERM')
  assert.is(await exited, 0)
})

test('--workers 1: the server answers 503, finishes and exits 1 for its supervisor to start a fresh one', async () => {
  const { bin } = brokenInstall('server/codeimage/validate.js')
  const { url, exited, output } = await startServe(['--port', '0', '--data-dir', tempDir(), '--workers', '1', '--no-rate-limits'], { PLAZA_CODEIMAGE_WORKERS: '1' }, { bin })
  const failed = await fetch(`${url}/api/codeimage`, snippet())
  assert.is(failed.status, 503)
  await failed.arrayBuffer()
  assert.is(await exited, 1)
  assert.match(output(), /a module failed to load[^"]*exits 1, for its supervisor to start a fresh one/)
})

test.run()
