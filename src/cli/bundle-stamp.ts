/**
 * Whether the CLI bundle (`dist/bundle/`, written by src/cli/bundle.ts) is current, so that it is
 * used only then: written after the dist/ modules it was made from (tsc rewrites every dist/ file
 * on each build, so a bare tsc run afterwards makes it stale), and holding the installed versions
 * of the packages bundled into it (after an update without a rebuild, it is stale too). Otherwise
 * the plain dist/ modules (and the installed packages) load. Modification times are compared, not
 * recorded: npm sets one time on every file of a packed package.
 */
import { readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

export interface BundleIndex {
  /** Version of each package bundled in, when the bundle was built. */
  packages: Record<string, string | null>
  /** oclif command id → its file in dist/bundle/. */
  commands: Record<string, string>
}

/** Where the index lies, under the package root. */
export const BUNDLE_INDEX = 'dist/bundle/commands.json'

/** The version of `name` that `root`'s modules get, or null when it is not installed. */
export function installedVersion(root: string, name: string): string | null {
  const require = createRequire(path.join(root, 'package.json'))
  // Where Node looks for the package (not every package exports its package.json).
  for (const dir of require.resolve.paths(name) ?? []) {
    try {
      return (JSON.parse(readFileSync(path.join(dir, name, 'package.json'), 'utf8')) as { version: string }).version
    } catch {
      // Not in this node_modules.
    }
  }
  return null
}

const mtime = (file: string) => statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? null

export function isCurrent(index: BundleIndex, root: string): boolean {
  const built = mtime(path.join(root, BUNDLE_INDEX))
  const modules = mtime(path.join(root, 'dist/cli/base.js'))
  if (built === null || modules === null || modules > built) return false
  return Object.entries(index.packages).every(([name, version]) => version !== null && installedVersion(root, name) === version)
}
