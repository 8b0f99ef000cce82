/**
 * Who may call the chat gateway, and how much. Open while no live key exists (and
 * `PLAZA_GATEWAY_AUTH` is not `required`); while one does, every gateway call needs a key
 * (`Authorization: Bearer <key>`, or `x-api-key: <key>` from Anthropic's clients). A key's model
 * allow-list, requests and tokens per minute, and lifetime budgets of tokens and of money are
 * checked before the call (`admit`), its usage and cost counted after it (`settle`).
 *
 * On the request path nothing waits on the database while the cache is fresh: a key's row is read
 * at most once per KEY_CACHE_MS, so a key created or revoked by another process (`plaza admin
 * keys`) takes effect here within that time, and at once when done through this process. The
 * per-minute limits are counted in the database (keys/minutes.ts), so they hold across every worker
 * and host; a key without rpm or tpm costs no query there.
 */
import { timingSafeEqual } from 'node:crypto'
import { TRPCError } from '@trpc/server'
import type { CreateGatewayKeyInput } from '../../../shared/schemas/gateway-keys.js'
import type { GatewayAuth } from '../../config.js'
import type { Db, ReadDb } from '../../db/client.js'
import type { Clock } from '../../services.js'
import { GatewayError } from '../errors.js'
import { dollars } from '../prices.js'
import { anyLiveGatewayKey, createGatewayKey, findGatewayKeys, hashGatewayKey, keyByHash, listGatewayKeys, revokeGatewayKey, type GatewayKeyInfo, type GatewayKeyRow } from './store.js'
import { createUsageBook, utcDay, type CallOutcome, type UsageBook, type UsageRow } from './usage.js'
import { createKeyMinutes, type MinuteWindow } from './minutes.js'

/** How long a key's row, and the answer to "does any live key exist", are trusted before being read again. */
export const KEY_CACHE_MS = 1_000

/** What a 401 says about sending a key, to every kind of client. */
const HOW_TO_SEND_A_KEY =
  'send it as Authorization: Bearer <key> (OpenAI clients: their apiKey), or x-api-key: <key> (Anthropic clients: their apiKey); the plaza CLI sends the PLAZA_GATEWAY_KEY variable. The operator creates keys with plaza admin keys create.'

/** What one admitted caller may do; the open gateway's pass allows everything and counts nothing. */
export interface GatewayPass {
  /** Null when the gateway is open. */
  readonly key: { id: number; name: string; premium: boolean } | null
  /** Whether the key may use this model name (for the models list). */
  allows(model: string): boolean
  /**
   * Throws 403 for a model outside the allow-list, 429 past a budget or a per-minute limit; counts
   * the request. Resolves with OpenAI's x-ratelimit-* headers for a key with rpm or tpm (none otherwise).
   */
  admit(model: string): Promise<Record<string, string>>
  /** Counts the call's tokens, cost (and whether it failed) once it has ended. */
  settle(model: string, outcome: CallOutcome): void
  /** The key's lifetime budgets and what it has used of them (every process's written usage plus this one's). */
  quota(): { budget_tokens: number | null; used_tokens: number; budget_usd: number | null; used_usd: number }
}

export interface GatewayAccess {
  /** The caller behind a key; 401 when a key is required and this is none, or a revoked one. */
  authorize(token: string | null): Promise<GatewayPass>
  /** True while calls need no key (no live key exists and PLAZA_GATEWAY_AUTH is not required). */
  isOpen(): Promise<boolean>
  createKey(input: CreateGatewayKeyInput): Promise<{ key: string; info: GatewayKeyInfo }>
  listKeys(): Promise<GatewayKeyInfo[]>
  revokeKey(ref: string): Promise<GatewayKeyInfo>
  /** Usage rows over the last `days` UTC days of one key, of the keys a reference (id or name) names, or of every key. */
  usage(options: { key?: { id: number; name: string }; ref?: string; days: number }): Promise<Array<UsageRow & { key_name: string }>>
  flush(): Promise<void>
  close(): Promise<void>
}

const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>
const OPEN_PASS: GatewayPass = { key: null, allows: () => true, admit: async () => NO_HEADERS, settle() {}, quota: () => ({ budget_tokens: null, used_tokens: 0, budget_usd: null, used_usd: 0 }) }

/** OpenAI's x-ratelimit-* headers of a key's last minute (only for the limits it has). */
function rateHeaders(limits: { rpm: number | null; tpm: number | null }, window: MinuteWindow): Record<string, string> {
  const headers: Record<string, string> = {}
  if (limits.rpm !== null) {
    headers['x-ratelimit-limit-requests'] = String(limits.rpm)
    headers['x-ratelimit-remaining-requests'] = String(Math.max(0, limits.rpm - window.requests))
    headers['x-ratelimit-reset-requests'] = `${window.requestsReset}s`
  }
  if (limits.tpm !== null) {
    headers['x-ratelimit-limit-tokens'] = String(limits.tpm)
    headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, limits.tpm - window.tokens))
    headers['x-ratelimit-reset-tokens'] = `${window.tokensReset}s`
  }
  return headers
}

const DAY_MS = 86_400_000

interface CachedKey {
  row: GatewayKeyRow
  /** The hash as bytes, for the constant-time comparison. */
  hash: Buffer
  models: Set<string> | null
  loadedAt: number
  /** Tokens and nano-dollars of this process already in `row.usedTokens` and `row.usedNanos` when it was read. */
  writtenAtLoad: { tokens: number; nanos: number }
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

function unauthorized(message: string): never {
  throw new GatewayError(401, 'invalid_api_key', message)
}

export function createGatewayAccess(options: { db: Db; reads: ReadDb; clock: Clock; auth: GatewayAuth; background: boolean; onError: (error: unknown) => void }): GatewayAccess {
  const { db, reads, clock } = options
  const book: UsageBook = createUsageBook(db, { background: options.background, onError: options.onError })
  const byHash = new Map<string, CachedKey>()
  // One pass per loaded row, made once rather than per call.
  const passes = new WeakMap<CachedKey, GatewayPass>()
  const minutes = createKeyMinutes(db, options.onError)
  // Whether a live key exists: read again at most once per KEY_CACHE_MS (a key revoked elsewhere may open the gateway).
  let keysExist: { value: boolean; at: number } | null = null

  async function required(now: number): Promise<boolean> {
    if (options.auth === 'required') return true
    if (keysExist && Math.abs(now - keysExist.at) < KEY_CACHE_MS) return keysExist.value
    const found = await anyLiveGatewayKey(reads).get()
    keysExist = { value: found !== undefined, at: now }
    return keysExist.value
  }

  async function load(hash: string, now: number): Promise<CachedKey | null> {
    // Read while no usage batch is being written, so that the row's used_tokens and `written` agree.
    const entry = await book.consistently(async () => {
      const row = await keyByHash(reads).get({ hash })
      if (!row) return null
      const loaded: CachedKey = { row, hash: Buffer.from(row.keyHash, 'hex'), models: row.models ? new Set(row.models) : null, loadedAt: now, writtenAtLoad: book.written(row.id) }
      passes.set(loaded, passFor(loaded))
      return loaded
    })
    if (entry) byHash.set(hash, entry)
    else byHash.delete(hash)
    return entry
  }

  function passFor(entry: CachedKey): GatewayPass {
    const { row } = entry
    const allows = (model: string) => entry.models === null || entry.models.has(model)
    const spent = () => row.usedTokens + book.counted(row.id).tokens - entry.writtenAtLoad.tokens
    const spentNanos = () => row.usedNanos + book.counted(row.id).nanos - entry.writtenAtLoad.nanos
    const limits = { rpm: row.rpm, tpm: row.tpm }
    return {
      key: { id: row.id, name: row.name, premium: row.premium },
      allows,
      async admit(model) {
        if (!allows(model)) {
          throw new GatewayError(403, 'model_not_allowed', `This key may not use the model "${model}"; it may use: ${[...entry.models!].join(', ')}.`, 'model')
        }
        if (row.budgetTokens !== null && spent() >= row.budgetTokens) {
          throw new GatewayError(429, 'insufficient_quota', `This key has used its budget of ${row.budgetTokens} tokens (${spent()} used); ask the operator for a new key.`)
        }
        if (row.budgetNanos !== null && spentNanos() >= row.budgetNanos) {
          throw new GatewayError(429, 'insufficient_quota', `This key has spent its budget of $${dollars(row.budgetNanos)} ($${dollars(spentNanos())} spent); ask the operator for a new key.`)
        }
        const counted = await minutes.admit(row.id, clock().getTime(), limits)
        if (!counted) return NO_HEADERS
        const headers = rateHeaders(limits, counted.window)
        const { refused } = counted
        if (refused) {
          const what = refused.limit === 'rpm' ? `make ${row.rpm} requests` : `use ${row.tpm} tokens`
          throw new GatewayError(429, 'rate_limit_exceeded', `Rate limit reached: this key may ${what} per minute; try again in ${refused.wait} s.`, null, refused.wait, headers)
        }
        return headers
      },
      settle(model, outcome) {
        const at = clock()
        book.record(row.id, utcDay(at), model, outcome)
        const tokens = outcome.usage ? (outcome.usage.total_tokens ?? outcome.usage.prompt_tokens + outcome.usage.completion_tokens) : 0
        if (tokens > 0 && row.tpm !== null) minutes.addTokens(row.id, at.getTime(), tokens)
      },
      quota: () => ({ budget_tokens: row.budgetTokens, used_tokens: spent(), budget_usd: row.budgetNanos === null ? null : dollars(row.budgetNanos), used_usd: dollars(spentNanos()) }),
    }
  }

  /** Forgets what this process cached of a key, so its change applies to the next call. */
  function forget(keyId: number) {
    for (const [hash, entry] of byHash) if (entry.row.id === keyId) byHash.delete(hash)
  }

  return {
    async authorize(token) {
      const now = clock().getTime()
      if (!(await required(now))) return OPEN_PASS
      if (!token) unauthorized(`This gateway requires an API key: ${HOW_TO_SEND_A_KEY}`)
      const hash = hashGatewayKey(token)
      let entry = byHash.get(hash)
      if (!entry || Math.abs(now - entry.loadedAt) >= KEY_CACHE_MS) entry = (await load(hash, now)) ?? undefined
      // Found by its hash, so only a caller who holds the key gets here; compared again in constant time all the same.
      if (!entry || !timingSafeEqual(entry.hash, Buffer.from(hash, 'hex'))) unauthorized(`Incorrect API key provided: it is not a key of this gateway. ${capitalise(HOW_TO_SEND_A_KEY)}`)
      if (entry.row.revokedAt !== null) unauthorized(`This API key has been revoked: ask the operator for a new one, and ${HOW_TO_SEND_A_KEY}`)
      return passes.get(entry)!
    },

    isOpen: async () => !(await required(clock().getTime())),

    async createKey(input) {
      const created = await createGatewayKey(db, input, clock())
      keysExist = { value: true, at: clock().getTime() }
      return created
    },

    listKeys: () => listGatewayKeys(db),

    async revokeKey(ref) {
      const revoked = await revokeGatewayKey(db, ref, clock())
      forget(revoked.id)
      // It may have been the last live key: the gateway is then open again (unless PLAZA_GATEWAY_AUTH=required).
      keysExist = null
      return revoked
    },

    async usage({ key, ref, days }) {
      const keys = key ? [key] : ref !== undefined ? await findGatewayKeys(db, ref) : await listGatewayKeys(db)
      if (ref !== undefined && keys.length === 0) throw new TRPCError({ code: 'NOT_FOUND', message: `no gateway key ${/^\d+$/.test(ref) ? `with id ${ref}` : `named "${ref}"`} (plaza admin keys list shows them)` })
      const names = new Map(keys.map(({ id, name }) => [id, name]))
      const since = utcDay(new Date(clock().getTime() - (days - 1) * DAY_MS))
      const rows = await book.read([...names.keys()], since)
      return rows.map((row) => ({ ...row, key_name: names.get(row.key_id) ?? '' }))
    },

    flush: () => book.flush(),

    close: () => book.close(),
  }
}
