import { createInterface } from 'node:readline/promises'
import { Args, Flags } from '@oclif/core'
import { dataDirFlag, loadAdminConfig } from '../../admin.js'
import type { DatabaseSummary } from '../../../server/db/backup.js'
import { CliCommand } from '../../command.js'

/**
 * Operator command: replaces the database of a stopped server with a backup, after checking that
 * the file is a healthy Plaza database this version can migrate. The swap is one rename.
 */
export default class AdminRestore extends CliCommand {
  static override description = 'Replace the database of a local data directory with a backup FILE. Stop the server first.'

  static override examples = [
    '<%= config.bin %> admin restore /var/backups/plaza/plaza-2026-11-22.db --data-dir /var/lib/plaza',
    '<%= config.bin %> admin restore plaza.db.bak --force --json',
  ]

  static override enableJsonFlag = true

  static override args = {
    file: Args.string({ description: 'the backup to restore (made by plaza admin backup)', required: true }),
  }

  static override flags = {
    'data-dir': dataDirFlag,
    force: Flags.boolean({ description: 'replace the database without asking', default: false }),
  }

  async run(): Promise<{ file: string; dataDir: string } & DatabaseSummary> {
    const { args, flags } = await this.parse(AdminRestore)
    const { stageRestore, BackupError } = await import('../../../server/db/backup.js')
    const config = await loadAdminConfig(this, flags['data-dir'])
    if (config.databaseUrl) this.error('PLAZA_DATABASE_URL is set: restore a libsql server with its own tools; this command replaces a local plaza.db', { exit: 2 })
    if (!flags.force && !process.stdin.isTTY) this.error('restore replaces the database: pass --force to confirm (no terminal to ask on)', { exit: 2 })
    try {
      const restore = await stageRestore(config.dataDir, args.file)
      const { summary } = restore
      if (!flags.force && !(await this.confirm(`Replace the database in ${config.dataDir} with ${args.file} (${summary.users} users, ${summary.posts} posts)? [y/N] `))) {
        restore.discard()
        this.error('nothing restored', { exit: 1 })
      }
      await restore.swap()
      if (!this.jsonEnabled()) {
        this.log(`restored ${args.file} into ${config.dataDir}: ${summary.users} users, ${summary.posts} posts`)
        if (summary.migrations.applied < summary.migrations.known) this.logToStderr('the next start applies the migrations made since the backup')
      }
      return { file: args.file, dataDir: config.dataDir, ...summary }
    } catch (error) {
      if (error instanceof BackupError) this.error(error.message, { exit: error.exit })
      throw error
    }
  }

  private async confirm(question: string): Promise<boolean> {
    const prompt = createInterface({ input: process.stdin, output: process.stderr })
    try {
      return /^y(es)?$/i.test((await prompt.question(question)).trim())
    } finally {
      prompt.close()
    }
  }
}
