/**
 * The CLI bundle (dist/bundle/, src/cli/bundle.ts) is used only while it is current: a tsc run or an
 * npm install after the build makes it stale, and the plain dist/ modules load instead. And it holds
 * every command but `serve`. (test/chat/startup.test.ts checks, through the spawned binary, what a
 * command loads with and without it.) The bundle checks need `npm run build` first.
 */
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { bundleStamp, isCurrent, type BundleIndex } from '../../src/cli/bundle-stamp.js'
import { ROOT } from '../helpers/cli.js'
import { tempDir } from '../helpers/server.js'

const bundle = suite('CLI bundle')

bundle('current only for the build and the install it was made from', () => {
  const root = tempDir('plaza-bundle-stamp-')
  const index = (): BundleIndex => ({ stamp: bundleStamp(root), commands: {} })
  assert.not.ok(isCurrent(index(), root), 'no dist/ at all: never current')

  mkdirSync(path.join(root, 'dist/cli'), { recursive: true })
  mkdirSync(path.join(root, 'node_modules'))
  const base = path.join(root, 'dist/cli/base.js')
  const lock = path.join(root, 'node_modules/.package-lock.json')
  writeFileSync(base, 'export {}\n')
  writeFileSync(lock, '{}\n')
  utimesSync(base, 1_000, 1_000)
  utimesSync(lock, 1_000, 1_000)
  const built = index()
  assert.ok(isCurrent(built, root))

  utimesSync(base, 2_000, 2_000) // tsc ran again
  assert.not.ok(isCurrent(built, root))
  utimesSync(base, 1_000, 1_000)
  assert.ok(isCurrent(built, root))
  utimesSync(lock, 2_000, 2_000) // npm installed something
  assert.not.ok(isCurrent(built, root))
})

bundle('the build bundled every command but serve, and the bundle is current', () => {
  const index = JSON.parse(readFileSync(path.join(ROOT, 'dist/bundle/commands.json'), 'utf8')) as BundleIndex
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, unknown> }
  assert.equal(Object.keys(index.commands).sort(), Object.keys(manifest.commands).filter((id) => id !== 'serve').sort())
  for (const file of Object.values(index.commands)) assert.ok(existsSync(path.join(ROOT, 'dist/bundle', file)), file)
  assert.ok(isCurrent(index, ROOT), 'run `npm run build`')
})

bundle.run()
