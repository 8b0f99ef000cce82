/**
 * Gateway usage per key, model and UTC day, counted in memory on the request path and written in
 * batches: every USAGE_FLUSH_MS while serving and on close, one transaction that adds each batch
 * to `gateway_usage` and to the keys' `used_tokens`. A batch that fails to write goes back into
 * the pending counts, so nothing is lost or counted twice. Readers merge the pending counts into
 * what the database holds, so this process's answers are exact at once.
 */
import { and, asc, gte, inArray, sql } from 'drizzle-orm'
import type { ChatUsage } from '../../../shared/schemas/chat.js'
import { writeTransaction, type Db } from '../../db/client.js'
import { gatewayKeys, gatewayUsage } from '../../db/schema.js'

/** How often a serving process writes the usage it counted. */
const USAGE_FLUSH_MS = 5_000

export interface UsageRow {
  key_id: number
  day: string
  model: string
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  /** Prompt tokens read from the provider's cache (within prompt_tokens). */
  cached_tokens: number
  requests: number
  errors: number
  /** What the calls cost by the price table, in nano-dollars. */
  cost_nanos: number
}

type Counts = Pick<UsageRow, 'prompt_tokens' | 'completion_tokens' | 'total_tokens' | 'cached_tokens' | 'requests' | 'errors' | 'cost_nanos'>

/** What one call adds: its tokens (none when the upstream reported none), its cost, and whether it failed. */
export interface CallOutcome {
  usage?: ChatUsage
  /** Nano-dollars, by the price table (0 or absent when its model has no price). */
  cost?: number
  failed: boolean
}

/** A key's spending: tokens and nano-dollars. */
export interface Spent {
  tokens: number
  nanos: number
}

export interface UsageBook {
  record(keyId: number, day: string, model: string, outcome: CallOutcome): void
  /** What this process counted for the key since it started (written or not). */
  counted(keyId: number): Spent
  /** What this process counted for the key and has written to the database. */
  written(keyId: number): Spent
  /** Usage rows of these keys from `sinceDay` on (the database's plus this process's unwritten counts). */
  read(keyIds: number[], sinceDay: string): Promise<UsageRow[]>
  /** Runs `fn` while no batch is being written, so that what it reads from the database and `written()` agree. */
  consistently<T>(fn: () => Promise<T>): Promise<T>
  flush(): Promise<void>
  close(): Promise<void>
}

/** `YYYY-MM-DD` of a time, in UTC. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10)
}

/** A pending row's identity: key id, day and model (any text a client sent as its model). */
type BookId = [keyId: number, day: string, model: string]

function emptyCounts(): Counts {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cached_tokens: 0, requests: 0, errors: 0, cost_nanos: 0 }
}

function addCounts(into: Counts, from: Counts) {
  into.prompt_tokens += from.prompt_tokens
  into.completion_tokens += from.completion_tokens
  into.total_tokens += from.total_tokens
  into.cached_tokens += from.cached_tokens
  into.requests += from.requests
  into.errors += from.errors
  into.cost_nanos += from.cost_nanos
}

const NOTHING: Spent = Object.freeze({ tokens: 0, nanos: 0 })

function addSpent(into: Map<number, Spent>, keyId: number, tokens: number, nanos: number) {
  const spent = into.get(keyId)
  if (spent) {
    spent.tokens += tokens
    spent.nanos += nanos
  } else into.set(keyId, { tokens, nanos })
}

export function createUsageBook(db: Db, options: { background: boolean; onError: (error: unknown) => void }): UsageBook {
  let pending = new Map<string, Counts>()
  const counted = new Map<number, Spent>()
  const written = new Map<number, Spent>()
  // Reads and flushes take turns, so a read never sees a batch both in the database and still pending.
  let turn: Promise<unknown> = Promise.resolve()
  const serially = <T>(fn: () => Promise<T>): Promise<T> => {
    const result = turn.then(fn, fn)
    turn = result.catch(() => {})
    return result
  }

  async function writeBatch(batch: Map<string, Counts>) {
    const rows = [...batch].map(([id, c]) => [...(JSON.parse(id) as BookId), c.prompt_tokens, c.completion_tokens, c.total_tokens, c.requests, c.errors, c.cached_tokens, c.cost_nanos])
    const json = JSON.stringify(rows)
    await writeTransaction(db, async (tx) => {
      await tx.run(sql`
        insert into ${gatewayUsage} (key_id, day, model, prompt_tokens, completion_tokens, total_tokens, requests, errors, cached_tokens, cost_nanos)
        select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9 from json_each(${json}) where true
        on conflict (key_id, day, model) do update set
          prompt_tokens = prompt_tokens + excluded.prompt_tokens,
          completion_tokens = completion_tokens + excluded.completion_tokens,
          total_tokens = total_tokens + excluded.total_tokens,
          requests = requests + excluded.requests,
          errors = errors + excluded.errors,
          cached_tokens = cached_tokens + excluded.cached_tokens,
          cost_nanos = cost_nanos + excluded.cost_nanos`)
      await tx.run(sql`
        update ${gatewayKeys} set used_tokens = used_tokens + t.total, used_nanos = used_nanos + t.nanos
        from (select value ->> 0 as id, sum(value ->> 5) as total, sum(value ->> 9) as nanos from json_each(${json}) group by 1) as t
        where ${gatewayKeys.id} = t.id`)
    })
  }

  const flush = () =>
    serially(async () => {
      if (pending.size === 0) return
      const batch = pending
      pending = new Map()
      try {
        await writeBatch(batch)
      } catch (error) {
        // Back into the counts, to be written with the next batch.
        for (const [id, counts] of batch) {
          const into = pending.get(id)
          if (into) addCounts(into, counts)
          else pending.set(id, counts)
        }
        throw error
      }
      for (const [id, counts] of batch) {
        const [keyId] = JSON.parse(id) as BookId
        addSpent(written, keyId, counts.total_tokens, counts.cost_nanos)
      }
    })

  const timer = options.background ? setInterval(() => void flush().catch(options.onError), USAGE_FLUSH_MS).unref() : null

  return {
    record(keyId, day, model, outcome) {
      const id = JSON.stringify([keyId, day, model] satisfies BookId)
      let counts = pending.get(id)
      if (!counts) pending.set(id, (counts = emptyCounts()))
      const prompt = outcome.usage?.prompt_tokens ?? 0
      const completion = outcome.usage?.completion_tokens ?? 0
      // Some upstreams leave total_tokens out; it is the sum then.
      const total = outcome.usage?.total_tokens ?? prompt + completion
      const cached = outcome.usage?.prompt_tokens_details?.cached_tokens ?? 0
      const cost = outcome.cost ?? 0
      addCounts(counts, { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total, cached_tokens: cached, requests: 1, errors: outcome.failed ? 1 : 0, cost_nanos: cost })
      addSpent(counted, keyId, total, cost)
    },

    counted: (keyId) => counted.get(keyId) ?? NOTHING,

    written: (keyId) => ({ ...(written.get(keyId) ?? NOTHING) }),

    read(keyIds, sinceDay) {
      return serially(async () => {
        if (keyIds.length === 0) return []
        const stored = await db
          .select({
            key_id: gatewayUsage.keyId,
            day: gatewayUsage.day,
            model: gatewayUsage.model,
            prompt_tokens: gatewayUsage.promptTokens,
            completion_tokens: gatewayUsage.completionTokens,
            total_tokens: gatewayUsage.totalTokens,
            cached_tokens: gatewayUsage.cachedTokens,
            requests: gatewayUsage.requests,
            errors: gatewayUsage.errors,
            cost_nanos: gatewayUsage.costNanos,
          })
          .from(gatewayUsage)
          .where(and(inArray(gatewayUsage.keyId, keyIds), gte(gatewayUsage.day, sinceDay)))
          .orderBy(asc(gatewayUsage.day), asc(gatewayUsage.keyId), asc(gatewayUsage.model))
        const rows = new Map<string, UsageRow>(stored.map((row) => [JSON.stringify([row.key_id, row.day, row.model] satisfies BookId), { ...row }]))
        for (const [id, counts] of pending) {
          const [keyId, day, model] = JSON.parse(id) as BookId
          if (!keyIds.includes(keyId) || day < sinceDay) continue
          const row = rows.get(id)
          if (row) addCounts(row, counts)
          else rows.set(id, { key_id: keyId, day, model, ...counts })
        }
        return [...rows.values()].sort((a, b) => a.day.localeCompare(b.day) || a.key_id - b.key_id || a.model.localeCompare(b.model))
      })
    },

    consistently: serially,

    flush,

    async close() {
      if (timer) clearInterval(timer)
      await flush().catch(options.onError)
    },
  }
}
