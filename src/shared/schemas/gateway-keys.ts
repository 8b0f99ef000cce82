/** Inputs about the chat gateway's keys: `plaza admin keys create` and `GET /api/v1/usage`. */
import { z } from 'zod'

/** All digits would read as an id in `plaza admin keys revoke ID|NAME`. */
const keyName = z
  .string({ error: 'name is required' })
  .regex(/^(?!\d+$)[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'name is 1 to 64 letters, digits, ".", "_" or "-", starts with a letter or digit, and is not all digits')

const perMinute = (name: string) => z.number().int(`${name} must be a whole number`).min(1, `${name} must be at least 1`).max(1e9, `${name} must be at most 1000000000`)

export const createGatewayKeyInput = z.strictObject({
  name: keyName,
  /** Model names as clients ask for them (aliases, `chaty`, `reasoning-70b`, names of the provider file); absent allows every one. */
  models: z
    .array(z.string().regex(/^[^\s,]{1,256}$/, 'each model name is 1 to 256 characters without spaces or commas'))
    .min(1, 'models must name at least one model (leave it out to allow every model)')
    .max(1000)
    .transform((names) => [...new Set(names)])
    .optional(),
  rpm: perMinute('rpm').optional(),
  tpm: perMinute('tpm').optional(),
  budget_tokens: z.number().int('budget_tokens must be a whole number').min(1, 'budget_tokens must be at least 1').max(Number.MAX_SAFE_INTEGER).optional(),
  /** Dollars the key may spend over its life, by the gateway's price table (docs/chat.md, "Spend"). */
  budget_usd: z.number({ error: 'budget_usd must be a number' }).gt(0, 'budget_usd must be more than 0').max(1_000_000_000, 'budget_usd must be at most 1000000000').optional(),
  premium: z.boolean().default(false),
})
export type CreateGatewayKeyInput = z.input<typeof createGatewayKeyInput>

/** How many UTC days of usage, today included. */
export const usageDays = z.coerce
  .number({ error: 'days must be a number' })
  .int('days must be a whole number')
  .min(1, 'days must be from 1 to 366')
  .max(366, 'days must be from 1 to 366')
  .default(30)

/** GET /api/v1/usage. */
export const gatewayUsageInput = z.object({ days: usageDays })
