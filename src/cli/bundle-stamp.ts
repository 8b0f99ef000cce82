/**
 * Which build the CLI bundle (`dist/bundle/`, written by src/cli/bundle.ts) came from, so that the
 * bundle is used only while it is current: tsc rewrites every dist/ file on each build, and npm
 * rewrites `node_modules/.package-lock.json` on each install. After either without `npm run build`,
 * the plain dist/ modules (and the installed packages) load instead.
 */
import { statSync } from 'node:fs'
import path from 'node:path'

export interface BundleIndex {
  stamp: BundleStamp
  /** oclif command id → its file in dist/bundle/. */
  commands: Record<string, string>
}

export interface BundleStamp {
  /** mtime of dist/cli/base.js (every command's base). */
  dist: number | null
  /** mtime of node_modules/.package-lock.json, when the package has its own node_modules. */
  packages: number | null
}

const mtime = (file: string) => statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? null

export function bundleStamp(root: string): BundleStamp {
  return { dist: mtime(path.join(root, 'dist/cli/base.js')), packages: mtime(path.join(root, 'node_modules/.package-lock.json')) }
}

export function isCurrent(index: BundleIndex, root: string): boolean {
  const now = bundleStamp(root)
  return index.stamp.dist !== null && index.stamp.dist === now.dist && index.stamp.packages === now.packages
}
