/** A small leveled logger writing one line per event to stderr. Never given secrets. */
export interface Logger {
  info(message: string, detail?: Record<string, unknown>): void
  error(message: string, detail?: Record<string, unknown>): void
}

export function createLogger(write: (line: string) => void = (line) => process.stderr.write(line + '\n')): Logger {
  const log = (level: string, message: string, detail?: Record<string, unknown>) =>
    write(JSON.stringify({ time: new Date().toISOString(), level, message, ...detail }))
  return { info: (m, d) => log('info', m, d), error: (m, d) => log('error', m, d) }
}

export const silentLogger: Logger = { info() {}, error() {} }
