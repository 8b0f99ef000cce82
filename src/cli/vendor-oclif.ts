/**
 * Writes `dist/vendor/oclif-core/index.cjs`: @oclif/core and its dependencies bundled into one file
 * (esbuild), which bin/run.js puts in the require cache in place of the installed package. Every
 * start loads oclif (about 470 small CommonJS files, most of `plaza --version`'s time); one file
 * loads in about half the time. Same code, same version: bin/run.js uses the bundle only while its
 * version is the installed one, so a stale bundle (dependencies updated, no rebuild) is ignored.
 *
 * Run by `npm run build`, after tsc.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const require = createRequire(path.join(root, 'package.json'))
const entry = require.resolve('@oclif/core')
const { version } = JSON.parse(readFileSync(require.resolve('@oclif/core/package.json'), 'utf8')) as { version: string }
const out = path.join(root, 'dist/vendor/oclif-core')
mkdirSync(out, { recursive: true })
await build({
  entryPoints: [entry],
  outfile: path.join(out, 'index.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // Only for running TypeScript plugins in development (oclif loads them if present); never bundled.
  external: ['typescript', 'ts-node', 'tsx'],
  logLevel: 'warning',
})
// oclif reads `../package.json` from its own folder for its version; bin/run.js compares this one with the installed package's.
writeFileSync(path.join(out, 'package.json'), JSON.stringify({ name: '@oclif/core', version, private: true, type: 'commonjs' }, null, 2) + '\n')
console.log(`bundled @oclif/core ${version} into ${path.relative(process.cwd(), out) || out}/index.cjs`)
