import { loadChatConfig } from './chat/config.js'
import { createChatGateway, type ChatGateway } from './chat/gateway.js'
import { createCodeImageService, type CodeImageService } from './codeimage/service.js'
import { openDatabase, type Db } from './db/client.js'
import type { ServerConfig } from './config.js'
import { createLogger, type Logger } from './logger.js'
import { RateLimiter } from './rate-limit.js'
import { LocalDiskStorage, type Storage } from './uploads/storage.js'

/** The current time; injected so that expiry (sessions, stories) is tested without sleeping. */
export type Clock = () => Date

export const systemClock: Clock = () => new Date()

/** Everything a procedure or route needs, built once per process (server or embedded CLI). */
export interface Services {
  config: ServerConfig
  db: Db
  clock: Clock
  logger: Logger
  /** Null when rate limits are off (`PLAZA_RATE_LIMITS=off`, `--no-rate-limits`, embedded use). */
  limiter: RateLimiter | null
  /** Uploaded and generated files (`uploads/...`), on the local disk under the data directory. */
  storage: Storage
  /** The chat gateway, configured from `PLAZA_LLM_*` in `config.env` (answers 503 when nothing is configured). */
  chat: ChatGateway
  /** Code-snippet images: a worker pool that starts on the first render (`PLAZA_CODEIMAGE_*` in `config.env`). */
  codeimage: CodeImageService
  close(): Promise<void>
}

export interface ServiceOptions {
  clock?: Clock
  logger?: Logger
}

export async function createServices(config: ServerConfig, options: ServiceOptions = {}): Promise<Services> {
  const clock = options.clock ?? systemClock
  const logger = options.logger ?? createLogger()
  // Before the database opens, so a bad chat configuration fails start-up without leaving anything open.
  const chat = createChatGateway(loadChatConfig(config.env), { logger, now: clock })
  const storage = new LocalDiskStorage(config.dataDir)
  const codeimage = createCodeImageService(config)
  const database = await openDatabase({ dataDir: config.dataDir, url: config.databaseUrl, authToken: config.databaseAuthToken })
  return {
    config,
    db: database.db,
    clock,
    logger,
    limiter: config.rateLimits ? new RateLimiter(config.rateLimits, () => clock().getTime()) : null,
    storage,
    chat,
    codeimage,
    async close() {
      database.close()
      await chat.close()
      await codeimage.close()
    },
  }
}
