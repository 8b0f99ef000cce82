import cluster, { type Worker } from 'node:cluster'
import { availableParallelism } from 'node:os'
import { Flags } from '@oclif/core'
import { ConfigError, type ConfigOverrides } from '../../server/config.js'
import { RemoteDatabaseError } from '../../server/db/remote-error.js'
import { localUploadsWarning, startServer } from '../../server/index.js'
import { CliCommand } from '../command.js'

/** What a cluster worker tells the primary once it is listening. */
interface ListeningMessage {
  type: 'plaza:listening'
  url: string
}

const isListening = (message: unknown): message is ListeningMessage => (message as ListeningMessage)?.type === 'plaza:listening'

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

  /** Serves from this process: the only one, or one of a cluster's `processes` workers. */
  private async runServer(overrides: ConfigOverrides, processes: number): Promise<void> {
    let started
    try {
      started = await startServer(overrides, { processes })
    } catch (error) {
      this.failStart(error)
    }
    // Handlers go in before the ready line: whoever waits for it may signal at once. They stay registered
    // while closing, so a second signal is seen: it forces the exit.
    const stopped = new Promise<void>((resolve) => {
      let stopping = false
      const stop = () => {
        if (stopping) process.exit(1)
        stopping = true
        started.app.close().then(resolve, resolve)
      }
      process.on('SIGINT', stop)
      process.on('SIGTERM', stop)
    })
    if (cluster.isWorker) process.send!({ type: 'plaza:listening', url: started.url } satisfies ListeningMessage)
    else {
      for (const warning of started.warnings) this.warn(warning)
      this.log(`listening on ${started.url}`)
    }
    await stopped
    // A worker's IPC channel would keep it alive.
    if (cluster.isWorker) process.exit(0)
  }

  /**
   * The cluster's primary: validates the configuration and applies migrations once (so workers
   * never race to migrate), forks the workers, prints the ready line when all of them listen,
   * replaces a worker that dies, and on SIGINT/SIGTERM has every worker drain, then exits.
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

    let stopping = false
    const live = new Set<Worker>()
    const ready = new Promise<string>((resolve, reject) => {
      let listening = 0
      const fork = () => {
        const worker = cluster.fork()
        live.add(worker)
        worker.on('message', (message) => {
          if (isListening(message) && ++listening === count) resolve(message.url)
        })
        worker.on('exit', (code, signal) => {
          live.delete(worker)
          if (stopping) return
          // A worker that fails before the cluster is up would fail again: give up. Later, replace it.
          if (listening < count) return reject(new Error(`a server worker exited during start-up (${signal ?? `code ${code}`})`))
          process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level: 'error', message: 'server worker died; starting another', code, signal }) + '\n')
          fork()
        })
      }
      for (let i = 0; i < count; i++) fork()
    })

    const stopped = new Promise<void>((resolve) => {
      const stop = (signal: NodeJS.Signals) => {
        if (stopping) {
          for (const worker of live) worker.process.kill('SIGKILL')
          process.exit(1)
        }
        stopping = true
        if (live.size === 0) return resolve()
        for (const worker of live) {
          worker.on('exit', () => live.size === 0 && resolve())
          worker.process.kill(signal)
        }
      }
      process.on('SIGINT', () => stop('SIGINT'))
      process.on('SIGTERM', () => stop('SIGTERM'))
    })

    let url: string
    try {
      url = await ready
    } catch (error) {
      stopping = true
      for (const worker of live) worker.process.kill('SIGKILL')
      this.error((error as Error).message, { exit: 1 })
    }
    for (const warning of warnings) this.warn(warning)
    this.log(`listening on ${url} (${count} workers)`)
    await stopped
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
