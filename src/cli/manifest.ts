/**
 * Writes `oclif.manifest.json` after the build (what `oclif manifest` does, without the `oclif` dev
 * package and its dependencies). With the manifest, oclif loads only the command being run; without
 * it, every command file (and all it imports: the server, sharp, shiki...) loads on each start.
 *
 * Run by `npm run build`; the manifest is ignored by git and must be regenerated whenever commands change.
 * A command that fails to load is left out with a warning rather than failing the build.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Plugin } from '@oclif/core'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: false })
await plugin.load()
const file = path.join(root, 'oclif.manifest.json')
writeFileSync(file, JSON.stringify(plugin.manifest, null, 2) + '\n')
console.log(`wrote ${path.relative(process.cwd(), file) || file} (${Object.keys(plugin.manifest.commands).length} commands)`)
