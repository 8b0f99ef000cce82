/**
 * Writes `dist/vendor/undici/fetch.cjs`: the parts of undici a remote CLI command uses (fetch,
 * Agent, FormData, from the files undici's index takes them from) and what they import, bundled
 * into one file with esbuild: about forty small CommonJS files otherwise. src/cli/client.ts loads
 * it instead of those files while its version is the installed one, and takes all three classes
 * from it, so one undici serves the CLI (a FormData must come from the undici whose fetch sends it).
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
const { version } = JSON.parse(readFileSync(require.resolve('undici/package.json'), 'utf8')) as { version: string }
const out = path.join(root, 'dist/vendor/undici')
mkdirSync(out, { recursive: true })
await build({
  stdin: {
    contents: [
      "exports.fetch = require('undici/lib/web/fetch/index.js').fetch",
      "exports.Agent = require('undici/lib/dispatcher/agent.js')",
      "exports.FormData = require('undici/lib/web/fetch/formdata.js').FormData",
    ].join('\n'),
    resolveDir: root,
    sourcefile: 'undici-fetch.cjs',
    loader: 'js',
  },
  outfile: path.join(out, 'fetch.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
})
// src/cli/client.ts compares this version with the installed package's.
writeFileSync(path.join(out, 'package.json'), JSON.stringify({ name: 'undici-fetch', version, private: true, type: 'commonjs' }, null, 2) + '\n')
console.log(`bundled undici ${version}'s fetch, Agent and FormData into ${path.relative(process.cwd(), out) || out}/fetch.cjs`)
