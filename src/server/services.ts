import type { ChatGateway } from './chat/gateway.js'
import type { GatewayAccess } from './chat/keys/access.js'
import type { ProviderLayer } from './providers/layer.js'
import { createExecuteService, type ExecuteService } from './catalog/tools/execute/service.js'
import { createCodeImageService, type CodeImageService } from './codeimage/service.js'
import { createSpeechService, type SpeechService } from './catalog/audio/service.js'
import { createMakerService, type MakerService } from './catalog/maker/pool.js'
import { openDatabase, workerSlot, type Db, type ReadDb } from './db/client.js'
import type { Warm } from './db/warm.js'
import { ConfigError, type ServerConfig } from './config.js'
import { setPasswordCost } from './auth/passwords.js'
import { createSessionTouches, SessionCache, type SessionTouches } from './auth/sessions.js'
import { createDelivery, type Delivery } from './delivery/service.js'
import { startFanout, type Fanout } from './domain/fanout.js'
import { createNotificationFeed, type NotificationFeed } from './domain/notification-feed.js'
import { createLogger, type Logger } from './logger.js'
import type { Metrics } from './metrics/recorder.js'
import { RateLimiter } from './rate-limit.js'
import { startMaintenance } from './uploads/generated.js'
import { LocalDiskStorage, type Storage } from './uploads/storage.js'
import { parseStorageConfig } from './uploads/storage-config.js'

/** The current time; injected so that expiry (sessions, stories) is tested without sleeping. */
export type Clock = () => Date

export const systemClock: Clock = () => new Date()

/** Everything a procedure or route needs, built once per process (server or embedded CLI). */
export interface Services {
  config: ServerConfig
  /** Writes and transactions (and reads that must see the transaction's own writes). */
  db: Db
  /**
   * Reads that need not run on the writing connection and whose cost does not grow with the data
   * (a page or less, by primary key or index range): synchronous, on the event loop's thread, with
   * prepared statements (db/prepared.ts). They see every write committed before the read starts.
   * `db` itself for a libsql server.
   */
  reads: ReadDb
  /**
   * Reads that scan (search, ranking, deep pages): worker threads with their own read-only
   * connections (`PLAZA_DB_READERS`, default 2), so a slow query never stalls the event loop.
   * `reads` where the readers are off, `db` for a libsql server.
   */
  scans: ReadDb
  /**
   * Reads the pages a write is about to change before its transaction takes the write lock, on
   * worker threads of its own (db/warm.ts): a hint, which never fails. A no-op where there are no reader workers.
   */
  warm: Warm
  /**
   * Before a request is served: a promise when `reads` must first catch up with a write another
   * process of this host acknowledged (an embedded replica), null when they see it already.
   */
  caughtUp(): Promise<void> | null
  clock: Clock
  /** When these services were created, by `clock`: the server's start (`GET /api/uptime`). */
  startedAt: Date
  logger: Logger
  /** Null when rate limits are off (`PLAZA_RATE_LIMITS=off`, `--no-rate-limits`, embedded use). */
  limiter: RateLimiter | null
  /**
   * Uploaded and generated files (`uploads/...`): on the local disk under the data directory, or
   * in an S3-compatible bucket (`PLAZA_STORAGE_URL`, docs/storage.md).
   */
  storage: Storage
  /**
   * The chat gateway, configured from `PLAZA_LLM_*` in `config.env` (answers 503 when nothing is
   * configured). Created on first use, so that a command that never chats neither loads the chat
   * modules nor reads that configuration; rejects with ConfigError (every time) when it is invalid.
   */
  chat(): Promise<ChatGateway>
  /** The second chat upstream of `POST /api/inference/chat/completions` (`PLAZA_INFERENCE_*`), created on first use like `chat()`. */
  inference(): Promise<ChatGateway>
  /**
   * The provider layer of the catalog's provider-backed operations (providers/, docs/providers.md),
   * configured from `PLAZA_<NAME>_*` and the `services:` of `PLAZA_LLM_CONFIG`. Created on first
   * use, like `chat()`; rejects with ConfigError (every time) when the configuration is invalid.
   */
  providers(): Promise<ProviderLayer>
  /** Code-snippet images: a worker pool that starts on the first render (`PLAZA_CODEIMAGE_*` in `config.env`). */
  codeimage: CodeImageService
  /** Local speech (Flite, eSpeak NG): a worker pool that starts on the first request (`PLAZA_SPEECH_*` in `config.env`). */
  speech: SpeechService
  /** Code execution (`POST /api/execute`): sandboxes that start on the first run (`PLAZA_EXECUTE_*`, `PLAZA_PISTON_*` in `config.env`). */
  execute: ExecuteService
  /** The Maker's cards (memes, post cards, logos): a worker pool that starts on the first card (`PLAZA_MAKER_*` in `config.env`). */
  maker: MakerService
  /**
   * Stops the heavy work (renders, speech, cards, sandboxes) as the server stops: no new job is
   * taken (503), and what is queued or running has `graceMs` to finish before its worker is ended
   * and its request answered 503, so a stop never waits on a job's own, longer time budget.
   */
  stopWork(graceMs: number): Promise<void>
  /**
   * Writes new posts into their followers' timelines after they are stored (domain/fanout.ts): in
   * the background while the process serves (`maintenance`), and on close for an embedded command.
   */
  fanout: Fanout
  /** Live notification streams: the process's one poller and its subscribers (domain/notification-feed.ts); idle until one opens. */
  notificationFeed: NotificationFeed
  /**
   * Outgoing delivery (delivery/): the VAPID keys, the mail outbox, and the push and mail sender
   * loops, which run while the process serves (`maintenance`); a one-shot command only queues.
   */
  delivery: Delivery
  /** Sessions' last uses, noted by each authenticated request and written in batches (auth/sessions.ts). */
  /** Resolved sessions, trusted while `auth_epoch` stands still (auth/sessions.ts). */
  sessions: SessionCache
  sessionTouches: SessionTouches
  /**
   * Metrics and call statistics (metrics/recorder.ts, docs/metrics.md). Null when switched off
   * (`PLAZA_METRICS=off`) and in a process that serves no requests (`maintenance: false`).
   */
  metrics: Metrics | null
  /**
   * The chat gateway's keys, their limits and usage (chat/keys/access.ts; usage is written in
   * batches). Created on first use, like `chat()`, so that a command that never chats loads none of it.
   */
  gatewayAccess(): Promise<GatewayAccess>
  close(): Promise<void>
}

export interface ServiceOptions {
  clock?: Clock
  logger?: Logger
  /**
   * Create the chat gateway and the provider layer now, before the database opens, so that an
   * invalid chat or provider configuration fails here (ConfigError) without leaving anything open:
   * `plaza serve` validates at start-up.
   */
  eagerChat?: boolean
  /**
   * Finish interrupted uploads and delete expired generated files now, then sweep on a timer
   * while the process lives, and fan out new posts in the background (default on; `false` for a
   * process that must not touch the files or answers one command).
   */
  maintenance?: boolean
  /**
   * Start reader workers for `reads` (default on; they start on the first read). Off for an
   * embedded CLI command: one request, nothing to run beside it, and start-up time matters.
   */
  readers?: boolean
  /**
   * Processes of this server sharing the database (`plaza serve --workers N`; default 1): their
   * fan-out runners share one runner's part of the write lock (domain/fanout.ts).
   */
  processes?: number
}

/** `PLAZA_DB_READERS`: how many reader workers (0 turns them off). */
function readerCount(env: NodeJS.ProcessEnv): number {
  const raw = env.PLAZA_DB_READERS
  if (raw === undefined || raw.trim() === '') return 2
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) throw new ConfigError(`PLAZA_DB_READERS must be a whole number (0 turns the reader workers off), not "${raw}"`)
  return value
}

/**
 * The storage `PLAZA_STORAGE_URL` names (ConfigError when it is invalid). A bucket's SDK is loaded
 * only then; with `check`, the bucket is listed once so that a wrong endpoint or credential stops
 * the start-up with one line.
 */
async function openStorage(config: ServerConfig, check: boolean): Promise<Storage> {
  const storageConfig = parseStorageConfig(config.env)
  if (storageConfig.kind === 'local') return new LocalDiskStorage(config.dataDir)
  const { createS3Storage } = await import('./uploads/s3-storage.js')
  const storage = createS3Storage(storageConfig)
  if (check) {
    try {
      await storage.check()
    } catch (error) {
      await storage.close()
      throw error
    }
  }
  return storage
}

export async function createServices(config: ServerConfig, options: ServiceOptions = {}): Promise<Services> {
  const clock = options.clock ?? systemClock
  setPasswordCost(config.passwordCost)
  const startedAt = clock()
  const logger = options.logger ?? createLogger(config.logLevel)
  // Created once the database is open; the gateway and the renderer report through it from then on.
  let metrics: Metrics | null = null
  let gateway: Promise<ChatGateway> | undefined
  const chat = () =>
    (gateway ??= Promise.all([import('./chat/config.js'), import('./chat/gateway.js')]).then(([{ loadChatConfig }, { createChatGateway }]) =>
      createChatGateway(loadChatConfig(config.env), { logger, now: clock, onUpstreamCall: (provider, outcome) => metrics?.upstreamCall(provider, outcome) }),
    ))
  let inferenceGateway: Promise<ChatGateway> | undefined
  const inference = () =>
    (inferenceGateway ??= Promise.all([import('./chat/config.js'), import('./chat/gateway.js')]).then(([{ loadInferenceConfig, HOW_TO_CONFIGURE_INFERENCE }, { createChatGateway }]) =>
      createChatGateway(loadInferenceConfig(config.env), {
        logger,
        now: clock,
        notConfigured: HOW_TO_CONFIGURE_INFERENCE,
        onUpstreamCall: (provider, outcome) => metrics?.upstreamCall(provider, outcome),
      }),
    ))
  let layer: Promise<ProviderLayer> | undefined
  const providers = () =>
    (layer ??= Promise.all([import('./providers/config.js'), import('./providers/layer.js')]).then(([{ loadProvidersConfig }, { createProviderLayer }]) =>
      createProviderLayer(loadProvidersConfig(config.env), { logger, onUpstreamCall: (provider, outcome) => metrics?.upstreamCall(provider, outcome) }),
    ))
  if (options.eagerChat) {
    await Promise.all([chat(), inference()])
    // The provider configuration is checked at start-up too; a mistake fails `plaza serve` with its message.
    await providers().catch(async (error) => {
      await gateway?.then((created) => created.close(), () => {})
      await inferenceGateway?.then((created) => created.close(), () => {})
      throw error
    })
  }
  let storage: Storage
  try {
    storage = await openStorage(config, options.eagerChat === true || options.maintenance !== false)
  } catch (error) {
    await gateway?.then((created) => created.close(), () => {})
    await inferenceGateway?.then((created) => created.close(), () => {})
    await layer?.then((created) => created.close(), () => {})
    throw error
  }
  // In a cluster, each process starts its share of the machine's heavy workers, not the whole machine's.
  const processes = options.processes
  const codeimage = createCodeImageService(config, { onRender: (outcome, seconds) => metrics?.codeImageRender(outcome, seconds), processes })
  const execute = createExecuteService(config.env, { onFailure: (message, detail) => logger.warn(message, { detail }), processes })
  // A serving process keeps a pool's workers loaded from its first job on; a one-shot command starts only what its job needs.
  const warm = options.maintenance !== false
  const speech = createSpeechService(config.env, { warm, processes })
  const maker = createMakerService(config.env, { warm, processes })
  const stopWork = (graceMs: number) => Promise.all([codeimage.close(graceMs), execute.close(graceMs), speech.close(graceMs), maker.close(graceMs)]).then(() => {})
  let database: Awaited<ReturnType<typeof openDatabase>>
  try {
    database = await openDatabase({
      dataDir: config.dataDir,
      url: config.databaseUrl,
      authToken: config.databaseAuthToken,
      requestTimeoutMs: config.databaseTimeoutMs,
      // Only a serving process keeps a replica (an embedded command or the cluster's primary asks the server).
      replica: options.maintenance !== false ? config.databaseReplica : undefined,
      replicaSlot: workerSlot(config.env),
      onReplicaError: (message) => logger.warn('embedded replica', { error: message }),
      readers: options.readers === false ? 0 : readerCount(config.env),
      checkpoints: options.maintenance !== false,
      onCheckpointError: (message) => logger.warn('WAL checkpoint failed', { error: message }),
    })
  } catch (error) {
    await gateway?.then((created) => created.close(), () => {})
    await storage.close?.()
    throw error
  }
  let stopMaintenance: (() => Promise<void>) | undefined
  // Imported only where it is used (prom-client is not small): a one-shot embedded command never loads it.
  if (config.metrics.enabled && options.maintenance !== false) metrics = (await import('./metrics/recorder.js')).createMetrics({ config, db: database.db, logger })
  let access: Promise<GatewayAccess> | undefined
  let delivery: Delivery
  try {
    delivery = await createDelivery({ db: database.db, reads: database.reads, config, clock, logger, background: options.maintenance !== false })
  } catch (error) {
    // A template that does not load, or a database that cannot store the VAPID keys: nothing is left open.
    await metrics?.close()
    await database.close()
    await gateway?.then((created) => created.close(), () => {})
    await inferenceGateway?.then((created) => created.close(), () => {})
    await layer?.then((created) => created.close(), () => {})
    await storage.close?.()
    throw error
  }
  const fanout = startFanout(
    { db: database.db, reads: database.reads, warm: database.warm, logger, maxFollowers: config.fanoutMaxFollowers },
    { background: options.maintenance !== false, processes: options.processes },
  )
  const services: Services = {
    config,
    db: database.db,
    reads: database.reads,
    scans: database.scans,
    warm: database.warm,
    caughtUp: database.caughtUp,
    clock,
    startedAt,
    logger,
    limiter: config.rateLimits ? new RateLimiter(database.db, config.rateLimits, () => clock().getTime(), database.client.protocol === 'file') : null,
    storage,
    chat,
    inference,
    providers,
    codeimage,
    speech,
    execute,
    maker,
    stopWork,
    fanout,
    delivery,
    notificationFeed: createNotificationFeed({ reads: database.reads, logger, limits: config.streams }),
    sessions: new SessionCache(database.reads),
    sessionTouches: createSessionTouches(database.db, {
      background: options.maintenance !== false,
      onError: (error) => logger.warn("recording sessions' last use failed", { error: String(error) }),
    }),
    metrics,
    gatewayAccess: () =>
      (access ??= import('./chat/keys/access.js').then(({ createGatewayAccess }) =>
        createGatewayAccess({
          db: database.db,
          reads: database.reads,
          clock,
          auth: config.gatewayAuth,
          background: options.maintenance !== false,
          onError: (error) => logger.warn('recording gateway usage failed', { error: String(error) }),
        }),
      )),
    async close() {
      services.notificationFeed.close()
      await delivery.close()
      await services.sessionTouches.close()
      await metrics?.close()
      await access?.then((created) => created.close(), () => {})
      await fanout.close()
      await stopMaintenance?.()
      await database.close()
      await gateway?.then((created) => created.close(), () => {})
      await inferenceGateway?.then((created) => created.close(), () => {})
      await layer?.then((created) => created.close(), () => {})
      await stopWork(0)
      await storage.close?.()
    },
  }
  if (options.maintenance !== false) {
    try {
      stopMaintenance = await startMaintenance(services)
    } catch (error) {
      await services.close()
      throw error
    }
  }
  return services
}
