import cluster, { type Worker } from 'node:cluster'
import { availableParallelism } from 'node:os'
import { Flags } from '@oclif/core'
import { ConfigError, type ConfigOverrides } from '../../server/config.js'
import { RemoteDatabaseError } from '../../server/db/remote-error.js'
import { localUploadsWarning, startServer, type StartedServer } from '../../server/index.js'
import { onLoadFailure } from '../../server/load-failure.js'
import { CliCommand } from '../command.js'

/**
 * What a cluster worker tells its primary: it listens; or it is leaving (a module failed to load,
 * load-failure.ts), so a replacement should start now, while it finishes what is in flight.
 */
type WorkerMessage = { type: 'plaza:listening'; url: string } | { type: 'plaza:retiring' }

/** What the primary tells a worker: stop accepting, finish what is in flight, exit 0. */
const DRAIN = { type: 'plaza:drain' } as const

const isWorkerMessage = (message: unknown): message is WorkerMessage =>
  (message as WorkerMessage)?.type === 'plaza:listening' || (message as WorkerMessage)?.type === 'plaza:retiring'

/** How long the primary waits before forking again after a worker died before it listened: doubling from this, up to `RESTART_DELAY_MAX_MS`. */
const RESTART_DELAY_MS = 100
const RESTART_DELAY_MAX_MS = 10_000

export default class Serve extends CliCommand {
  /** Nothing it prints is JSON: no --jq. */
  static override baseFlags = {}

  static override description =
    'Run the Plaza server: the social API, the utility API, tRPC and uploads on one port, in one process per core (--workers).'

  static override examples = [
    '<%= config.bin %> serve',
    '<%= config.bin %> serve --port 3000 --host 0.0.0.0 --data-dir /var/lib/plaza',
    '<%= config.bin %> serve --workers 1',
    'PLAZA_RATE_LIMITS=off <%= config.bin %> serve',
  ]

  static override flags = {
    port: Flags.integer({ char: 'p', description: 'port to listen on (0 picks a free one) [env: PLAZA_PORT, default: 8080]', min: 0, max: 65535 }),
    host: Flags.string({ description: 'address to bind [env: PLAZA_HOST, default: 127.0.0.1]' }),
    'data-dir': Flags.string({ char: 'd', description: 'where the database and uploads live [env: PLAZA_DATA_DIR, default: ./.plaza]' }),
    'rate-limits': Flags.boolean({
      description: 'enforce per-client rate limits (--no-rate-limits turns them off) [env: PLAZA_RATE_LIMITS]',
      allowNo: true,
    }),
    workers: Flags.integer({
      char: 'w',
      description: 'server processes sharing the port and the database (1 serves from this process) [env: PLAZA_WORKERS, default: one per core]',
      min: 1,
      max: 256,
      env: 'PLAZA_WORKERS',
    }),
  }

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve)
    const overrides: ConfigOverrides = {
      port: flags.port,
      host: flags.host,
      dataDir: flags['data-dir'],
      rateLimits: flags['rate-limits'] === false ? false : undefined,
    }
    const workers = flags.workers ?? availableParallelism()
    if (cluster.isPrimary && workers > 1) return this.runPrimary(workers, overrides)
    return this.runServer(overrides, cluster.isWorker ? workers : 1)
  }

  /**
   * Serves from this process: the only one, or one of a cluster's `processes` workers.
   *
   * The first SIGINT or SIGTERM drains: stop accepting, let in-flight requests finish, release the
   * services, exit 0; a second forces the exit (1). A cluster worker also drains on its primary's
   * order, which comes as a message and never counts as that second signal: a terminal's Ctrl+C
   * and systemd's stop signal every process of the group, the primary included, and when the
   * primary passed the signal on, each worker saw two and cut its requests. A worker whose primary
   * is gone drains too. A process that failed to load a module (server/load-failure.ts) drains and
   * exits 1: its primary starts a replacement at once; a single process leaves that to its supervisor.
   */
  private async runServer(overrides: ConfigOverrides, processes: number): Promise<void> {
    let started: StartedServer | undefined
    let closing: Promise<void> | undefined
    let drainWanted = false
    let exitCode = 0
    let signals = 0
    let stopped!: () => void
    const done = new Promise<void>((resolve) => (stopped = resolve))
    const drain = () => {
      drainWanted = true
      if (started && !closing) closing = started.app.close().then(stopped, stopped)
    }
    // In before anything slow, so that no signal or order is missed. Before the server listens there is nothing to drain: a signal ends it at once.
    const onSignal = () => {
      if (!started || ++signals > 1) process.exit(started ? 1 : 0)
      drain()
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
    if (cluster.isWorker) {
      process.on('message', (message) => (message as typeof DRAIN)?.type === DRAIN.type && drain())
      process.on('disconnect', drain)
    }
    try {
      started = await startServer(overrides, { processes })
    } catch (error) {
      this.failStart(error)
    }
    const { logger } = started
    onLoadFailure(() => {
      logger.error(
        cluster.isWorker
          ? 'a module failed to load (the installation changed under the server?): this worker finishes its requests and exits; the primary starts a fresh one'
          : 'a module failed to load (the installation changed under the server?): the server finishes its requests and exits 1, for its supervisor to start a fresh one',
        { pid: process.pid },
      )
      exitCode = 1
      if (cluster.isWorker && process.connected) process.send!({ type: 'plaza:retiring' } satisfies WorkerMessage)
      drain()
    })
    if (cluster.isWorker) process.send!({ type: 'plaza:listening', url: started.url } satisfies WorkerMessage)
    else {
      for (const warning of started.warnings) this.warn(warning)
      this.log(`listening on ${started.url}`)
    }
    if (drainWanted) drain()
    await done
    // A worker's IPC channel would keep it alive.
    if (cluster.isWorker || exitCode) process.exit(exitCode)
  }

  /**
   * The cluster's primary: validates the configuration and applies migrations once (so workers
   * never race to migrate), forks the workers, prints the ready line when all of them listen, and
   * replaces a worker that dies (one that dies before it listens, after a pause that doubles each
   * time, so that a broken installation does not fork in a tight loop) or that says it is leaving.
   * On SIGINT/SIGTERM it orders every worker to drain and exits once all have: 0 when each that
   * served exited 0; a second signal kills them and exits 1.
   */
  private async runPrimary(count: number, overrides: ConfigOverrides): Promise<void> {
    // Said once by this process, not once per worker.
    const warnings: string[] = []
    try {
      const [{ loadConfig }, { createServices }, { silentLogger }, { openGatewayWarning }] = await Promise.all([
        import('../../server/config.js'),
        import('../../server/services.js'),
        import('../../server/logger.js'),
        import('../../server/chat/keys/exposure.js'),
      ])
      const config = loadConfig(overrides)
      const services = await createServices(config, { eagerChat: true, maintenance: false, logger: silentLogger })
      try {
        for (const warning of [await openGatewayWarning(services), localUploadsWarning(config)]) if (warning) warnings.push(warning)
      } finally {
        await services.close()
      }
    } catch (error) {
      this.failStart(error)
    }
    // A scrape reaching any worker reports the whole server: that worker asks here, and this process asks them all.
    const { serveClusterMetrics } = await import('../../server/metrics/cluster.js')
    serveClusterMetrics()

    const log = (level: 'error' | 'info', message: string, detail: Record<string, unknown>) =>
      process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level, message, ...detail }) + '\n')
    let stopping = false
    let up = false
    let exitCode = 0
    /** Workers that died before they listened since one last did. */
    let startFailures = 0
    let restart: NodeJS.Timeout | undefined
    const live = new Set<Worker>()
    /** Workers that have listened: they take the order to drain. */
    const serving = new WeakSet<Worker>()
    /** Workers that said they are leaving: their replacement is already forked. */
    const retiring = new WeakSet<Worker>()
    let allStopped!: () => void
    const stopped = new Promise<void>((resolve) => (allStopped = resolve))
    const ready = new Promise<string>((resolve, reject) => {
      let listening = 0
      // Each live worker has a slot of its own, the lowest free one (1..count, more while a retiring
      // worker drains beside its replacement): what a worker keeps on disk (an embedded replica's
      // file) is taken over by the next worker in its slot, not made again, and never shared.
      const slots = new Map<Worker, number>()
      const fork = () => {
        const taken = new Set(slots.values())
        let slot = 1
        while (taken.has(slot)) slot++
        const worker = cluster.fork({ PLAZA_WORKER_SLOT: String(slot) })
        slots.set(worker, slot)
        live.add(worker)
        worker.on('message', (message) => {
          if (!isWorkerMessage(message)) return
          if (message.type === 'plaza:listening') {
            serving.add(worker)
            startFailures = 0
            if (up) log('info', 'server worker replaced', { pid: worker.process.pid })
            else if (++listening === count) {
              up = true
              resolve(message.url)
            }
          } else if (!stopping && !retiring.has(worker)) {
            retiring.add(worker)
            fork()
          }
        })
        worker.on('exit', (code, signal) => {
          live.delete(worker)
          slots.delete(worker)
          if (stopping) {
            // One still starting was stopped by a signal, with nothing in flight; one that served had to drain.
            if (code !== 0 && serving.has(worker)) exitCode = 1
            if (live.size === 0) allStopped()
            return
          }
          // A worker that fails before the cluster is up would fail again: give up. Later, replace it.
          if (!up) return reject(new Error(`a server worker exited during start-up (${signal ?? `code ${code}`})`))
          if (retiring.has(worker)) return void log('info', 'server worker retired', { pid: worker.process.pid, code, signal })
          log('error', 'server worker died; starting another', { pid: worker.process.pid, code, signal })
          const delay = serving.has(worker) ? 0 : Math.min(RESTART_DELAY_MS * 2 ** startFailures++, RESTART_DELAY_MAX_MS)
          restart = setTimeout(fork, delay)
        })
      }
      for (let i = 0; i < count; i++) fork()
    })

    const stop = () => {
      if (stopping) {
        for (const worker of live) worker.process.kill('SIGKILL')
        process.exit(1)
      }
      stopping = true
      clearTimeout(restart)
      if (live.size === 0) return allStopped()
      // A worker still starting may not listen for the order yet; it has nothing in flight, and stops at a signal.
      for (const worker of live) {
        if (serving.has(worker) && worker.isConnected()) worker.send(DRAIN)
        else if (!serving.has(worker)) worker.process.kill('SIGTERM')
      }
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)

    let url: string | null
    try {
      url = await Promise.race([ready, stopped.then(() => null)])
    } catch (error) {
      stopping = true
      for (const worker of live) worker.process.kill('SIGKILL')
      this.error((error as Error).message, { exit: 1 })
    }
    if (url !== null) {
      for (const warning of warnings) this.warn(warning)
      this.log(`listening on ${url} (${count} workers)`)
      await stopped
    }
    process.exitCode = exitCode
  }

  private failStart(error: unknown): never {
    if (error instanceof ConfigError) this.error(error.message, { exit: 2 })
    // A libsql server that cannot be reached, or lacks what Plaza needs: one line, before any request.
    if (error instanceof RemoteDatabaseError) this.error(error.message, { exit: 1 })
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') this.error(`cannot listen: ${(error as Error).message}`, { exit: 1 })
    throw error
  }
}
