/**
 * Optional packages a local catalog operation runs on (eSpeak NG, GPL-3.0, is not installed with
 * Plaza): where to load one from, and whether it is there. An environment variable may point at
 * the module's file instead (PLAZA_ESPEAK_MODULE), which is also how a test proves the "missing" path.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isAbsolute, resolve } from 'node:path'

export interface OptionalPackage {
  /** The npm package, as `npm install` takes it. */
  name: string
  /** The environment variable that may name the module's file instead. */
  override: string
}

/** What to import: the override's absolute path when set, else the package name. */
export function optionalModule(pkg: OptionalPackage, env: NodeJS.ProcessEnv): string {
  const override = env[pkg.override]?.trim()
  if (!override) return pkg.name
  return isAbsolute(override) ? override : resolve(override)
}

/** Whether the module can be found (a cheap resolve: loading it is left to its first use). */
export function isOptionalPackageAvailable(pkg: OptionalPackage, env: NodeJS.ProcessEnv): boolean {
  const target = optionalModule(pkg, env)
  if (isAbsolute(target)) return existsSync(target)
  try {
    createRequire(import.meta.url).resolve(target)
    return true
  } catch {
    return false
  }
}
