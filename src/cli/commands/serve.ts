import { Command, Flags } from '@oclif/core'
import { ConfigError } from '../../server/config.js'
import { startServer } from '../../server/index.js'

export default class Serve extends Command {
  static override description = 'Run the Plaza server: the social API, the utility API, tRPC and uploads on one port.'

  static override examples = [
    '<%= config.bin %> serve',
    '<%= config.bin %> serve --port 3000 --host 0.0.0.0 --data-dir /var/lib/plaza',
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
  }

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve)
    let started
    try {
      started = await startServer({
        port: flags.port,
        host: flags.host,
        dataDir: flags['data-dir'],
        rateLimits: flags['rate-limits'] === false ? false : undefined,
      })
    } catch (error) {
      if (error instanceof ConfigError) this.error(error.message, { exit: 2 })
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') this.error(`cannot listen: ${(error as Error).message}`, { exit: 1 })
      throw error
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
    this.log(`listening on ${started.url}`)
    await stopped
  }
}
