/** A small leveled logger writing one JSON line per event to stderr. Never given secrets. */
import type { LogLevel } from './config.js'

export interface Logger {
  error(message: string, detail?: Record<string, unknown>): void
  warn(message: string, detail?: Record<string, unknown>): void
  info(message: string, detail?: Record<string, unknown>): void
  debug(message: string, detail?: Record<string, unknown>): void
}

const SEVERITY: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 }

/** Writes events at `level` and more severe ones (`PLAZA_LOG_LEVEL`, default info). */
export function createLogger(level: LogLevel = 'info', write: (line: string) => void = (line) => process.stderr.write(line + '\n')): Logger {
  const at = (name: LogLevel) =>
    SEVERITY[name] > SEVERITY[level]
      ? () => {}
      : (message: string, detail?: Record<string, unknown>) => write(JSON.stringify({ time: new Date().toISOString(), level: name, message, ...detail }))
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') }
}

export const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {} }
