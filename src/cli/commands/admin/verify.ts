import { existsSync } from 'node:fs'
import path from 'node:path'
import { Args, Flags } from '@oclif/core'
import { dataDirFlag, loadAdminConfig } from '../../admin.js'
import { TRPCError } from '@trpc/server'
import type { UserProfile } from '../../../shared/types.js'
import { CliCommand } from '../../command.js'

/**
 * Operator command: sets (or with --unset clears) a user's verified badge. It acts on the data
 * directory directly, never through a server, because no API lets anyone grant the badge.
 */
export default class AdminVerify extends CliCommand {
  static override description = 'Mark a user as verified (or clear it with --unset), directly on a local data directory.'

  static override examples = [
    '<%= config.bin %> admin verify alice',
    '<%= config.bin %> admin verify alice --unset',
    '<%= config.bin %> admin verify alice --data-dir /var/lib/plaza --json',
  ]

  static override enableJsonFlag = true

  static override args = {
    username: Args.string({ description: 'the user to verify (case-insensitive)', required: true }),
  }

  static override flags = {
    'data-dir': dataDirFlag,
    unset: Flags.boolean({ description: 'remove the verified badge instead', default: false }),
  }

  async run(): Promise<UserProfile> {
    const { args, flags } = await this.parse(AdminVerify)
    const [{ createServices }, { silentLogger }, { setVerified }] = await Promise.all([
      import('../../../server/services.js'),
      import('../../../server/logger.js'),
      import('../../../server/domain/users.js'),
    ])
    const config = await loadAdminConfig(this, flags['data-dir'])
    // Opening a missing directory would create an empty database; say what is wrong instead.
    if (!config.databaseUrl && !existsSync(path.join(config.dataDir, 'plaza.db'))) {
      this.error(`no Plaza database in ${config.dataDir} (pass --data-dir or set PLAZA_DATA_DIR)`, { exit: 1 })
    }
    const services = await createServices(config, { logger: silentLogger, maintenance: false })
    try {
      const profile = await setVerified(services.db, args.username, !flags.unset, services.clock())
      if (!this.jsonEnabled()) this.log(`${profile.username} is ${profile.is_verified ? 'now verified' : 'no longer verified'}`)
      return profile
    } catch (error) {
      if (error instanceof TRPCError && error.code === 'NOT_FOUND') this.error(`no user named "${args.username}"`, { exit: 1 })
      throw error
    } finally {
      await services.close()
    }
  }
}
