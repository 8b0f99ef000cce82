/**
 * The CLI bundle (dist/bundle/, src/cli/bundle.ts) is used only while it is current: a tsc run after
 * the build, or another version of a package bundled in, makes it stale, and the plain dist/ modules load instead. And it holds
 * every command but `serve`. (test/chat/startup.test.ts checks, through the spawned binary, what a
 * command loads with and without it.) The bundle checks need `npm run build` first.
 */
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { BUNDLE_INDEX, installedVersion, isCurrent, type BundleIndex } from '../../src/cli/bundle-stamp.js'
import { ROOT } from '../helpers/cli.js'
import { tempDir } from '../helpers/server.js'

const bundle = suite('CLI bundle')

bundle('current only after the build it was made from, with the versions it holds', () => {
  const root = tempDir('plaza-bundle-stamp-')
  writeFileSync(path.join(root, 'package.json'), '{"name": "stamp", "type": "module"}\n')
  const zod = path.join(root, 'node_modules/zod')
  mkdirSync(zod, { recursive: true })
  writeFileSync(path.join(zod, 'package.json'), '{"name": "zod", "version": "4.0.0"}\n')
  assert.is(installedVersion(root, 'zod'), '4.0.0')
  assert.is(installedVersion(root, 'not-installed'), null)
  const index: BundleIndex = { packages: { zod: '4.0.0' }, commands: {} }
  assert.not.ok(isCurrent(index, root), 'nothing built')

  mkdirSync(path.join(root, 'dist/cli'), { recursive: true })
  mkdirSync(path.join(root, 'dist/bundle'))
  const base = path.join(root, 'dist/cli/base.js')
  const built = path.join(root, BUNDLE_INDEX)
  writeFileSync(base, 'export {}\n')
  writeFileSync(built, JSON.stringify(index))
  utimesSync(base, 1_000, 1_000)
  utimesSync(built, 2_000, 2_000)
  assert.ok(isCurrent(index, root))
  utimesSync(built, 1_000, 1_000) // a packed package: one time on every file
  assert.ok(isCurrent(index, root))

  utimesSync(base, 3_000, 3_000) // tsc ran again after the bundle
  assert.not.ok(isCurrent(index, root))
  utimesSync(base, 1_000, 1_000)
  writeFileSync(path.join(zod, 'package.json'), '{"name": "zod", "version": "4.1.0"}\n') // updated, not rebuilt
  assert.not.ok(isCurrent(index, root))
  assert.not.ok(isCurrent({ packages: { zod: null }, commands: {} }, root))
})

bundle('the build bundled every command but serve, and the bundle is current', () => {
  const index = JSON.parse(readFileSync(path.join(ROOT, 'dist/bundle/commands.json'), 'utf8')) as BundleIndex
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, unknown> }
  assert.equal(Object.keys(index.commands).sort(), Object.keys(manifest.commands).filter((id) => id !== 'serve').sort())
  for (const file of Object.values(index.commands)) assert.ok(existsSync(path.join(ROOT, 'dist/bundle', file)), file)
  assert.ok(isCurrent(index, ROOT), 'run `npm run build`')
})

bundle.run()
