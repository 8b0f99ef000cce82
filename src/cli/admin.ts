/** What every operator command (`plaza admin …`) shares: the data-directory flag and reading the configuration for it. */
import { Flags, type Command } from '@oclif/core'
import type { ServerConfig } from '../server/config.js'

export const dataDirFlag = Flags.string({ char: 'd', description: 'data directory holding plaza.db (default ./.plaza)', env: 'PLAZA_DATA_DIR' })

/** The configuration for `dataDir` (rate limits off: no requests are served); a configuration mistake exits 2. */
export async function loadAdminConfig(command: Command, dataDir: string | undefined): Promise<ServerConfig> {
  const { loadConfig, ConfigError } = await import('../server/config.js')
  try {
    return loadConfig({ dataDir, rateLimits: false })
  } catch (error) {
    if (error instanceof ConfigError) command.error(error.message, { exit: 2 })
    throw error
  }
}
