import { createApp, type App } from './app.js'
import { openGatewayWarning } from './chat/keys/exposure.js'
import { loadConfig, type ConfigOverrides, type ServerConfig } from './config.js'
import { isModuleLoadError, reportLoadFailure } from './load-failure.js'
import type { Logger } from './logger.js'
import { createServices, type ServiceOptions } from './services.js'

export interface StartedServer {
  app: App
  url: string
  /** What the operator should hear about once (not per worker): an open gateway on a public address. */
  warnings: string[]
  logger: Logger
}

/**
 * The last line of defence: anything that still escapes a handler (a stream error without a
 * listener, a rejected promise nobody awaited) is logged with its stack and the server keeps
 * serving, rather than one request taking the process down; a module that failed to load retires
 * the process all the same (load-failure.ts). Returns the remover.
 */
export function guardProcess(logger: { error(message: string, detail?: Record<string, unknown>): void }): () => void {
  const onError = (kind: string) => (error: unknown) => {
    logger.error(`${kind}: the server keeps serving`, { error: String((error as Error)?.stack ?? error) })
    if (isModuleLoadError(error)) reportLoadFailure(error)
  }
  const uncaught = onError('uncaught exception')
  const unhandled = onError('unhandled rejection')
  process.on('uncaughtException', uncaught)
  process.on('unhandledRejection', unhandled)
  return () => {
    process.off('uncaughtException', uncaught)
    process.off('unhandledRejection', unhandled)
  }
}

/**
 * A database shared by several hosts with uploads on this host's disk: an upload made here would not
 * be served by the others (docs/deploy.md). Said once at start-up, not at the first upload.
 */
export function localUploadsWarning(config: ServerConfig): string | null {
  // `local` (or unset) is the data directory (uploads/storage-config.ts); anything else is a shared store, or a ConfigError already.
  const storage = config.env.PLAZA_STORAGE_URL?.trim() ?? ''
  if (!config.databaseUrl || (storage !== '' && storage !== 'local')) return null
  return `the database is on a libsql server but uploads are stored in ${config.dataDir}: with several hosts, set PLAZA_STORAGE_URL to shared object storage so every host serves every upload (docs/deploy.md)`
}

/** Loads the configuration, opens the data layer and starts listening. */
export async function startServer(overrides: ConfigOverrides = {}, options: ServiceOptions = {}): Promise<StartedServer> {
  const config = loadConfig(overrides)
  // The chat configuration is validated now (a mistake is a ConfigError: `plaza serve` exits 2), not at the first chat request.
  const services = await createServices(config, { ...options, eagerChat: true })
  const app = createApp(services)
  guardProcess(services.logger)
  try {
    const address = await app.listen(config.port, config.host)
    config.port = address.port
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
    // Start the code-image workers in the background, so the first render doesn't pay for fonts and grammars.
    if (config.codeimageWarm) services.codeimage.warm().catch((error) => services.logger.error('code-image warm-up failed', { error: String(error) }))
    const warning = await openGatewayWarning(services)
    return { app, url: `http://${host}:${address.port}`, warnings: [warning, localUploadsWarning(config)].filter((line): line is string => line !== null), logger: services.logger }
  } catch (error) {
    await services.close()
    throw error
  }
}
