/**
 * oclif's `init` hook, run before the command is looked up: while the CLI bundle (`dist/bundle/`,
 * src/cli/bundle.ts) is current, points each command of the manifest at its bundled file, so a
 * command loads a few files instead of hundreds. Without a bundle, with a stale one (see
 * bundle-stamp.ts), or with PLAZA_CLI_BUNDLE=0, nothing changes: the dist/ modules load.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { Hook } from '@oclif/core'
import { BUNDLE_INDEX, isCurrent, type BundleIndex } from '../bundle-stamp.js'

const hook: Hook.Init = async function ({ config }) {
  if (process.env.PLAZA_CLI_BUNDLE === '0') return
  let index: BundleIndex
  try {
    index = JSON.parse(readFileSync(path.join(config.root, BUNDLE_INDEX), 'utf8')) as BundleIndex
  } catch {
    return // no bundle (not built yet)
  }
  // The root plugin's manifest (oclif.manifest.json), which oclif reads when it loads a command.
  const plugin = config.plugins.get(config.pjson.name) as { manifest?: { commands?: Record<string, { relativePath?: string[] }> } } | undefined
  const commands = plugin?.manifest?.commands
  if (!commands || !isCurrent(index, config.root)) return
  for (const [id, file] of Object.entries(index.commands)) {
    const command = commands[id]
    if (command?.relativePath) command.relativePath = ['dist', 'bundle', file]
  }
}

export default hook
