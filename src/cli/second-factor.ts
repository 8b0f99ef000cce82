/** The second factor a command sends: `--code`, `--recovery-code`, or asked for on the terminal. */
import { Flags } from '@oclif/core'
import { UsageError } from './client.js'
import { promptPassword } from './password.js'

export const secondFactorFlags = {
  code: Flags.string({ description: 'the 6-digit code of your authenticator app (else it is asked for)', exclusive: ['recovery-code'] }),
  'recovery-code': Flags.string({ description: 'one of your recovery codes instead of a code (each works once)' }),
}

/** The flags' code, else one typed at a prompt (digits are a code, anything else a recovery code); a usage error with neither. */
export async function secondFactor(flags: { code?: string; 'recovery-code'?: string }, canPrompt: boolean): Promise<{ code: string } | { recovery_code: string }> {
  if (flags['recovery-code'] !== undefined) return { recovery_code: flags['recovery-code'] }
  if (flags.code !== undefined) return { code: flags.code }
  if (!canPrompt || !process.stdin.isTTY) throw new UsageError('two-factor login is on for this account: pass --code (or --recovery-code)')
  const typed = (await promptPassword('Two-factor code (or a recovery code): ')).trim()
  return /^[\d\s]+$/.test(typed) ? { code: typed } : { recovery_code: typed }
}
