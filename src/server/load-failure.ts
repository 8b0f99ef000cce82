/**
 * A module that fails to load while the process serves: the files on disk are no longer the ones
 * the process started from (`npm ci` or an upgrade replacing node_modules or dist/ under a running
 * server). Node caches a module that failed to link, and the lazily loaded parts of Plaza (routers,
 * catalog handlers, providers, worker threads) keep the failed promise, so such a process would
 * answer 500 for that feature until restarted. Instead the request is answered 503 (errors.ts) and
 * the process is told here; `plaza serve` then drains it and exits, and a fresh process (the
 * cluster's replacement, or the supervisor's restart) loads the installation as it now is.
 */

/** Node's codes for a module or package that cannot be found or read as one. */
const LOAD_CODES = new Set([
  'ERR_MODULE_NOT_FOUND',
  'MODULE_NOT_FOUND',
  'ERR_PACKAGE_PATH_NOT_EXPORTED',
  'ERR_PACKAGE_IMPORT_NOT_DEFINED',
  'ERR_INVALID_PACKAGE_CONFIG',
  'ERR_INVALID_PACKAGE_TARGET',
  'ERR_UNSUPPORTED_DIR_IMPORT',
  'ERR_UNKNOWN_FILE_EXTENSION',
  'ERR_DLOPEN_FAILED',
])

/** Linking a module against one of another version: `The requested module 'x' does not provide an export named 'y'`. */
const LINK_MISMATCH = /^The requested module '[^']+' does not provide an export named /

/** Whether `error` (or one of its causes) says a module could not be loaded. */
export function isModuleLoadError(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    const { code, name, message } = current as { code?: unknown; name?: unknown; message?: unknown }
    if (typeof code === 'string' && LOAD_CODES.has(code)) return true
    if (name === 'SyntaxError' && typeof message === 'string' && LINK_MISMATCH.test(message)) return true
  }
  return false
}

type Listener = (error: unknown) => void

const listeners = new Set<Listener>()
let reported: { error: unknown } | undefined

/**
 * Says that this process failed to load a module: the listeners hear it once per process (the
 * first failure is enough to retire it; the requests after it are answered 503 as well).
 */
export function reportLoadFailure(error: unknown): void {
  if (reported) return
  reported = { error }
  for (const listener of listeners) listener(error)
}

/** Calls `listener` when this process fails to load a module (at once if it already has). Returns the remover. */
export function onLoadFailure(listener: Listener): () => void {
  listeners.add(listener)
  if (reported) listener(reported.error)
  return () => listeners.delete(listener)
}
