import { existsSync } from 'node:fs'
import path from 'node:path'
import { Command, Flags } from '@oclif/core'
import { asUsageError, dataDirFlag, loadAdminConfig } from '../../../admin.js'
import type { MigrationReport } from '../../../../server/uploads/migrate.js'

/**
 * Operator command: copies the uploaded and generated files of a local data directory into an
 * S3-compatible bucket (credentials from `PLAZA_S3_*`), before pointing `PLAZA_STORAGE_URL` at it.
 * Run it again after a failure or to catch up: files already there are skipped.
 */
export default class AdminStorageMigrate extends Command {
  static override description =
    "Copy a local data directory's files (uploads and generated files) to an S3-compatible bucket, under the same keys. Idempotent: files already in the bucket are skipped. The bucket's endpoint and credentials come from PLAZA_S3_ENDPOINT, PLAZA_S3_REGION, PLAZA_S3_ACCESS_KEY_ID, PLAZA_S3_SECRET_ACCESS_KEY and PLAZA_S3_FORCE_PATH_STYLE."

  static override examples = [
    '<%= config.bin %> admin storage migrate --to s3://plaza-media/prod --data-dir /var/lib/plaza',
    'PLAZA_S3_ENDPOINT=http://127.0.0.1:9000 PLAZA_S3_FORCE_PATH_STYLE=1 <%= config.bin %> admin storage migrate --to s3://plaza --json',
  ]

  static override enableJsonFlag = true

  static override flags = {
    'data-dir': dataDirFlag,
    to: Flags.string({ description: 'the bucket and prefix to copy to: s3://bucket/prefix', required: true }),
  }

  async run(): Promise<MigrationReport & { to: string }> {
    const { flags } = await this.parse(AdminStorageMigrate).catch(asUsageError)
    const [{ ConfigError }, { parseS3Config, describeStorage }] = await Promise.all([
      import('../../../../server/config.js'),
      import('../../../../server/uploads/storage-config.js'),
    ])
    const config = await loadAdminConfig(this, flags['data-dir'])
    let target
    try {
      target = parseS3Config('--to', flags.to, process.env)
    } catch (error) {
      if (error instanceof ConfigError) this.error(error.message, { exit: 2 })
      throw error
    }
    if (!existsSync(path.join(config.dataDir, 'uploads')) && !existsSync(path.join(config.dataDir, 'plaza.db'))) {
      this.error(`no Plaza data directory at ${config.dataDir} (pass --data-dir or set PLAZA_DATA_DIR)`, { exit: 1 })
    }
    const [{ createS3Storage }, { migrateFiles }] = await Promise.all([
      import('../../../../server/uploads/s3-storage.js'),
      import('../../../../server/uploads/migrate.js'),
    ])
    const storage = createS3Storage(target)
    const to = describeStorage(target)
    try {
      try {
        await storage.check()
      } catch (error) {
        if (error instanceof ConfigError) this.error(error.message, { exit: 2 })
        throw error
      }
      const report = await migrateFiles(config.dataDir, storage)
      if (!this.jsonEnabled()) {
        this.log(`copied ${report.copied} files (${report.bytes} bytes) from ${config.dataDir} to ${to}; ${report.skipped} already there; ${report.failed.length} failed`)
        for (const failure of report.failed) this.logToStderr(`failed: ${failure.key}: ${failure.error}`)
      }
      if (report.failed.length > 0) process.exitCode = 1
      return { to, ...report }
    } finally {
      await storage.close()
    }
  }
}
