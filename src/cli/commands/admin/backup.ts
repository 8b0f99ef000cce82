import { Args, Flags } from '@oclif/core'
import { dataDirFlag, loadAdminConfig } from '../../admin.js'
import { CliCommand } from '../../command.js'

/**
 * Operator command: a consistent copy of the database, taken while the server runs (SQLite's
 * VACUUM INTO reads one snapshot; writers are not stopped). Uploads are plain immutable files and
 * are copied with rsync (docs/operations.md).
 */
export default class AdminBackup extends CliCommand {
  static override description = 'Copy the database of a local data directory to FILE (mode 0600), safely while the server is running.'

  static override examples = [
    '<%= config.bin %> admin backup /var/backups/plaza/plaza-$(date +%F).db',
    '<%= config.bin %> admin backup plaza.db.bak --data-dir /var/lib/plaza --force --json',
  ]

  static override enableJsonFlag = true

  static override args = {
    file: Args.string({ description: 'where to write the backup (its folder must exist)', required: true }),
  }

  static override flags = {
    'data-dir': dataDirFlag,
    force: Flags.boolean({ description: 'replace FILE if it exists', default: false }),
  }

  async run(): Promise<{ file: string; bytes: number }> {
    const { args, flags } = await this.parse(AdminBackup)
    const { backupDatabase, BackupError } = await import('../../../server/db/backup.js')
    const config = await loadAdminConfig(this, flags['data-dir'])
    if (config.databaseUrl) this.error('PLAZA_DATABASE_URL is set: back up a libsql server with its own tools; this command copies a local plaza.db', { exit: 2 })
    try {
      const result = await backupDatabase(config.dataDir, args.file, flags.force)
      if (!this.jsonEnabled()) this.log(`backed up ${config.dataDir}/plaza.db to ${result.file} (${result.bytes} bytes)`)
      return result
    } catch (error) {
      if (error instanceof BackupError) this.error(error.message, { exit: error.exit })
      throw error
    }
  }
}
