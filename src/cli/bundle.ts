/**
 * Writes `dist/bundle/`: the CLI's commands and the modules they import (ours, zod, drizzle, tRPC)
 * bundled with esbuild, so a command reads a few files instead of about three hundred (an embedded
 * `whoami` loaded ~320 modules, most of its start-up). The hook `src/cli/hooks/bundle.ts` points
 * oclif at these files while they are current (see `bundleStamp`); otherwise the plain dist/
 * modules load as before.
 *
 * - One entry point per command (from oclif.manifest.json; `serve` stays unbundled: a server's
 *   start-up is not what matters), with code splitting: what several commands share is one chunk,
 *   and every lazy `import()` (the routers, the chat gateway, the migrator, s3, metrics...) stays a
 *   separate chunk loaded only when reached.
 * - Only pure JavaScript packages whose many small files cost start-up are bundled (`BUNDLED`);
 *   every other package stays an import of the installed one: the native (libsql, sharp, resvg),
 *   WebAssembly (shiki, quickjs, jq) and heavy lazy ones (ink, prom-client), and undici, which the
 *   CLI loads from its own files and must stay one copy per process (FormData, Agent).
 * - Our modules find files relative to themselves (`import.meta.url`: migrations, worker entry
 *   points, fonts, templates); in a bundle that would be the chunk's URL. Every output file lies
 *   directly in dist/bundle/, so each `import.meta.url` of ours is rewritten to the URL of the
 *   module's own dist/ file, computed from the chunk's: the same paths as unbundled, and the worker
 *   threads still start from dist/.
 *
 * Writes `commands.json` (command id → file, and the versions of the packages bundled in) and
 * `inputs.json` (each output file → the modules in it, for tests that check what a command loads).
 * Run by `npm run build`, after tsc and the manifest.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'esbuild'
import { BUNDLE_INDEX, installedVersion, type BundleIndex } from './bundle-stamp.js'

/** Packages bundled in (pure ESM JavaScript, many files, loaded by most commands). */
const BUNDLED = new Set(['zod', 'drizzle-orm', '@trpc/server', '@trpc/client'])
/** Commands left to load from dist/. */
const UNBUNDLED = new Set(['serve'])

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const dist = path.join(root, 'dist')
const out = path.join(dist, 'bundle')

const manifest = JSON.parse(readFileSync(path.join(root, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, { relativePath: string[] }> }
const entries = Object.entries(manifest.commands)
  .filter(([id]) => !UNBUNDLED.has(id))
  .map(([id, command]) => ({ id, in: path.join(root, ...command.relativePath), out: id.replaceAll(':', '.') }))

const builtins = new Set(builtinModules)
const packageName = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')

const plazaBundle: Plugin = {
  name: 'plaza-bundle',
  setup(build) {
    // Bare specifiers: bundled only when in BUNDLED; node's own modules and every other package stay imports.
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === 'entry-point') return undefined
      if (args.path.startsWith('node:') || builtins.has(args.path)) return { path: args.path, external: true }
      return BUNDLED.has(packageName(args.path)) ? undefined : { path: args.path, external: true }
    })
    // Our modules keep their own import.meta.url (see above).
    build.onLoad({ filter: /\.js$/ }, (args) => {
      const relative = path.relative(dist, args.path)
      if (relative.startsWith('..') || !/^(cli|server|shared)\//.test(relative.split(path.sep).join('/'))) return undefined
      const own = path.relative(out, args.path).split(path.sep).join('/')
      const contents = readFileSync(args.path, 'utf8').replace(/\bimport\.meta\.url\b/g, `new URL(${JSON.stringify(own)}, import.meta.url).href`)
      return { contents, loader: 'js' }
    })
  },
}

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
const result = await build({
  entryPoints: entries.map(({ in: input, out: name }) => ({ in: input, out: name })),
  outdir: out,
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  metafile: true,
  plugins: [plazaBundle],
  logLevel: 'warning',
})

const index: BundleIndex = { packages: Object.fromEntries([...BUNDLED].map((name) => [name, installedVersion(root, name)])), commands: {} }
for (const { id, out: name } of entries) index.commands[id] = `${name}.js`
const inputs: Record<string, string[]> = {}
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  inputs[path.basename(file)] = Object.keys(output.inputs).map((input) => path.relative(root, path.resolve(input)).split(path.sep).join('/'))
}
writeFileSync(path.join(out, 'inputs.json'), JSON.stringify(inputs) + '\n')
// Last: its modification time is the bundle's (bundle-stamp.ts).
writeFileSync(path.join(root, BUNDLE_INDEX), JSON.stringify(index) + '\n')
const files = Object.keys(result.metafile.outputs).length
console.log(`bundled ${entries.length} commands into ${path.relative(process.cwd(), out) || out} (${files} files)`)
