/** What every operator command (`plaza admin …`) shares: the data-directory flag and reading the configuration for it. */
import { existsSync } from 'node:fs'
import { userInfo } from 'node:os'
import path from 'node:path'
import { Errors, Flags, type Command } from '@oclif/core'
import { TRPCError } from '@trpc/server'
import type { ServerConfig } from '../server/config.js'
import type { ModerationBy } from '../shared/schemas/reports.js'
import type { Services } from '../server/services.js'

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

/**
 * Runs `fn` on the services of a data directory, closed afterwards. A directory without a database
 * is an error (exit 1) rather than a new empty database. Domain refusals become exit codes a script
 * can act on: a bad request is a usage error (2); not found or a conflict (already resolved,
 * already suspended) is an error (1).
 */
export async function withDataDir<T>(command: Command, dataDir: string | undefined, fn: (services: Services) => Promise<T>): Promise<T> {
  const [{ createServices }, { silentLogger }] = await Promise.all([import('../server/services.js'), import('../server/logger.js')])
  const config = await loadAdminConfig(command, dataDir)
  if (!config.databaseUrl && !existsSync(path.join(config.dataDir, 'plaza.db'))) {
    command.error(`no Plaza database in ${config.dataDir} (pass --data-dir or set PLAZA_DATA_DIR)`, { exit: 1 })
  }
  const services = await createServices(config, { logger: silentLogger, maintenance: false, readers: false })
  try {
    return await fn(services)
  } catch (error) {
    if (error instanceof TRPCError) command.error(error.message, { exit: error.code === 'BAD_REQUEST' ? 2 : 1 })
    throw error
  } finally {
    await services.close()
  }
}

/** oclif rejects a malformed flag value ("abc" for an integer) with a plain Error; that is a usage error (exit 2). */
export function asUsageError(error: Error): never {
  throw error instanceof Errors.CLIError ? error : new Errors.CLIError(error.message, { exit: 2 })
}

/** USER arguments take a username or a numeric id. */
export const userRefOf = (ref: string): number | string => (/^\d+$/.test(ref) ? Number(ref) : ref)

export const moderatorFlag = Flags.string({ description: 'who acts, for the moderation record (default: your OS user name)' })
export const noteFlag = Flags.string({ description: 'why, kept in the moderation record (at most 1000 characters)' })

/** The moderator's name: the flag, else the OS user running the command. */
export function moderatorName(flag: string | undefined): string {
  if (flag !== undefined) return flag
  try {
    return userInfo().username
  } catch {
    // No passwd entry for this uid (some containers).
    return process.env.USER ?? process.env.LOGNAME ?? `uid ${process.getuid?.() ?? 'unknown'}`
  }
}

/** The moderator and note of an action, checked like any input (a bad one is a usage error, exit 2). */
export async function moderationBy(flags: { moderator?: string; note?: string }): Promise<ModerationBy> {
  const { moderationByInput } = await import('../shared/schemas/reports.js')
  const parsed = moderationByInput.safeParse({ moderator: moderatorName(flags.moderator), note: flags.note })
  if (!parsed.success) throw new Errors.CLIError(parsed.error.issues.map((issue) => issue.message).join('; '), { exit: 2 })
  return parsed.data
}

/** Columns padded to their widest cell; the last column is left unpadded so long text does not push lines out. */
export function formatTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => row[i].length)))
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd()
  return [line(headers), ...rows.map(line)].join('\n')
}
