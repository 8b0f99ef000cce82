/**
 * The gateway's keys in the database: created (the key itself is returned once and only its
 * SHA-256 is stored), listed without secrets, revoked, and found by hash on the request path.
 */
import { createHash, randomBytes } from 'node:crypto'
import { TRPCError } from '@trpc/server'
import { and, asc, eq, isNull, sql } from 'drizzle-orm'
import { formatDateTime } from '../../../shared/dates.js'
import { createGatewayKeyInput, type CreateGatewayKeyInput } from '../../../shared/schemas/gateway-keys.js'
import type { Db } from '../../db/client.js'
import { prepared, type AnyDb } from '../../db/prepared.js'
import { gatewayKeys } from '../../db/schema.js'
import { dollars } from '../prices.js'

/** `sk-` so that secret scanners recognise a leaked key; 256 random bits after the prefix. */
const KEY_PREFIX = 'sk-plaza-'

/** A key is 256 random bits, so one unsalted SHA-256 is enough to make the stored hash useless to a thief. */
export function hashGatewayKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

export type GatewayKeyRow = typeof gatewayKeys.$inferSelect

/** A key as the operator sees it: never the key, never its hash. */
export interface GatewayKeyInfo {
  id: number
  name: string
  models: string[] | null
  rpm: number | null
  tpm: number | null
  budget_tokens: number | null
  used_tokens: number
  /** Dollars the key may spend over its life (by the price table); null for no money budget. */
  budget_usd: number | null
  used_usd: number
  premium: boolean
  created_at: string
  revoked_at: string | null
}

function toKeyInfo(row: GatewayKeyRow): GatewayKeyInfo {
  return {
    id: row.id,
    name: row.name,
    models: row.models ?? null,
    rpm: row.rpm,
    tpm: row.tpm,
    budget_tokens: row.budgetTokens,
    used_tokens: row.usedTokens,
    budget_usd: row.budgetNanos === null ? null : dollars(row.budgetNanos),
    used_usd: dollars(row.usedNanos),
    premium: row.premium,
    created_at: formatDateTime(row.createdAt),
    revoked_at: row.revokedAt === null ? null : formatDateTime(row.revokedAt),
  }
}

function badRequest(message: string): never {
  throw new TRPCError({ code: 'BAD_REQUEST', message })
}

/** Creates a key; the answer holds the key itself, which is never shown again. */
export async function createGatewayKey(db: Db, input: CreateGatewayKeyInput, now: Date): Promise<{ key: string; info: GatewayKeyInfo }> {
  const parsed = createGatewayKeyInput.safeParse(input)
  if (!parsed.success) badRequest(parsed.error.issues.map((issue) => issue.message).join('; '))
  const spec = parsed.data
  const key = KEY_PREFIX + randomBytes(32).toString('base64url')
  try {
    const [row] = await db
      .insert(gatewayKeys)
      .values({
        name: spec.name,
        keyHash: hashGatewayKey(key),
        models: spec.models ?? null,
        rpm: spec.rpm ?? null,
        tpm: spec.tpm ?? null,
        budgetTokens: spec.budget_tokens ?? null,
        budgetNanos: spec.budget_usd === undefined ? null : Math.round(spec.budget_usd * 1e9),
        premium: spec.premium,
        createdAt: now.getTime(),
      })
      .returning()
    return { key, info: toKeyInfo(row) }
  } catch (error) {
    if (/UNIQUE constraint failed: gateway_keys\.name/.test(String((error as Error)?.message) + String((error as { cause?: unknown })?.cause ?? ''))) {
      throw new TRPCError({ code: 'CONFLICT', message: `a live key named "${spec.name}" already exists (revoke it first, or pick another name)` })
    }
    throw error
  }
}

/** Every key, live and revoked, oldest first. */
export async function listGatewayKeys(db: Db): Promise<GatewayKeyInfo[]> {
  const rows = await db.select().from(gatewayKeys).orderBy(asc(gatewayKeys.id))
  return rows.map(toKeyInfo)
}

/** The keys a reference names: a numeric id, else every key (live or revoked) of that name. */
export async function findGatewayKeys(db: Db, ref: string): Promise<GatewayKeyRow[]> {
  return db
    .select()
    .from(gatewayKeys)
    .where(/^\d+$/.test(ref) ? eq(gatewayKeys.id, Number(ref)) : eq(gatewayKeys.name, ref))
    .orderBy(asc(gatewayKeys.id))
}

/** Revokes a key by id or by the name of a live key; 404 when none matches, 409 when it is already revoked. */
export async function revokeGatewayKey(db: Db, ref: string, now: Date): Promise<GatewayKeyInfo> {
  const byId = /^\d+$/.test(ref)
  const [row] = await db
    .update(gatewayKeys)
    .set({ revokedAt: now.getTime() })
    .where(and(byId ? eq(gatewayKeys.id, Number(ref)) : eq(gatewayKeys.name, ref), isNull(gatewayKeys.revokedAt)))
    .returning()
  if (row) return toKeyInfo(row)
  const known = await findGatewayKeys(db, ref)
  if (known.length > 0) throw new TRPCError({ code: 'CONFLICT', message: `the key ${byId ? `#${ref}` : `"${ref}"`} is already revoked` })
  throw new TRPCError({ code: 'NOT_FOUND', message: `no gateway key ${byId ? `with id ${ref}` : `named "${ref}"`} (plaza admin keys list shows them)` })
}

/** The key with this hash (revoked ones too, so that a revoked key is told apart from an unknown one). */
export const keyByHash = prepared((db: AnyDb) =>
  db.select().from(gatewayKeys).where(eq(gatewayKeys.keyHash, sql.placeholder('hash'))).limit(1).prepare(),
)

/** Whether a live (unrevoked) key exists: while one does, the gateway requires a key (the live-name index serves it). */
export const anyLiveGatewayKey = prepared((db: AnyDb) => db.select({ id: gatewayKeys.id }).from(gatewayKeys).where(isNull(gatewayKeys.revokedAt)).limit(1).prepare())
