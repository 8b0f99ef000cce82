/**
 * The answers of `POST /v1/responses` kept in the database, for `previous_response_id` and for
 * `GET` / `DELETE /v1/responses/{id}`.
 *
 * - A response translated to chat completions keeps its conversation (`context`: the chat
 *   messages up to and including its output), so the next one sends the whole of it upstream.
 *   One a provider answered itself (it serves the Responses API) is kept by that provider: Plaza
 *   keeps its body and the provider's name, and passes `previous_response_id` on to it.
 * - A response belongs to the key that made it: another key gets 404. Without keys, possession
 *   of the id (128 random bits) is access, as for conversations.
 * - A response is gone 24 hours after it was made (404, as an unknown id); saving one sweeps a
 *   bounded batch of expired ones away, at most once a minute per process.
 */
import { eq, inArray, lte, sql } from 'drizzle-orm'
import type { ChatMessage } from '../../../shared/schemas/chat.js'
import type { Db, ReadDb } from '../../db/client.js'
import { prepared, type AnyDb } from '../../db/prepared.js'
import { gatewayResponses } from '../../db/schema.js'
import type { Clock } from '../../services.js'

export const RESPONSE_TTL_MS = 24 * 60 * 60 * 1000
/** A conversation longer than this is not kept for continuing (its response is still kept for GET). */
const CONTEXT_LIMIT_BYTES = 16 * 1024 * 1024
/** Expired responses are deleted in batches of this many, at most once per SWEEP_MS per process. */
const SWEEP_BATCH = 500
const SWEEP_MS = 60_000

export interface StoredResponse {
  id: string
  keyId: number | null
  /** The response object as answered. */
  body: Record<string, unknown>
  /** Null when Plaza keeps the conversation; else the provider that keeps it. */
  provider: string | null
  /** The conversation up to this response (chat messages); null when a provider keeps it or it grew too long. */
  context: ChatMessage[] | null
}

export interface ResponseStore {
  /** The response, unless unknown, expired or another key's. */
  get(id: string, keyId: number | null): Promise<StoredResponse | null>
  save(response: StoredResponse): Promise<void>
  /** Deletes it; false when there was none the key may see. */
  delete(id: string, keyId: number | null): Promise<boolean>
}

/** A response by its id: a primary-key lookup on the inline reader, which sees every write committed before it. */
const responseById = prepared((db: AnyDb) => db.select().from(gatewayResponses).where(eq(gatewayResponses.id, sql.placeholder('id'))).limit(1).prepare())

/** When each database was last swept by this process. */
const sweptAt = new WeakMap<Db, number>()

export function responseStore(services: { db: Db; reads: ReadDb; clock: Clock }): ResponseStore {
  const { db } = services
  const now = () => services.clock().getTime()
  const visible = (row: { keyId: number | null; createdAt: number }, keyId: number | null) => row.createdAt > now() - RESPONSE_TTL_MS && (row.keyId === null || row.keyId === keyId)

  async function get(id: string, keyId: number | null): Promise<StoredResponse | null> {
    const row = await responseById(services.reads).get({ id })
    if (!row || !visible(row, keyId)) return null
    return { id: row.id, keyId: row.keyId, body: JSON.parse(row.body), provider: row.provider, context: row.context === null ? null : JSON.parse(row.context) }
  }

  return {
    get,

    async save(response) {
      const at = now()
      const context = response.context === null ? null : JSON.stringify(response.context)
      const values = {
        id: response.id,
        keyId: response.keyId,
        createdAt: at,
        provider: response.provider,
        body: JSON.stringify(response.body),
        context: context !== null && Buffer.byteLength(context) <= CONTEXT_LIMIT_BYTES ? context : null,
      }
      // One statement on the request path; a provider's id seen twice (stored, then answered again) keeps its latest body.
      await db.insert(gatewayResponses).values(values).onConflictDoUpdate({ target: gatewayResponses.id, set: { body: values.body, createdAt: at } })
      if (at - (sweptAt.get(db) ?? -Infinity) >= SWEEP_MS) {
        sweptAt.set(db, at)
        const expired = db.select({ id: gatewayResponses.id }).from(gatewayResponses).where(lte(gatewayResponses.createdAt, at - RESPONSE_TTL_MS)).limit(SWEEP_BATCH)
        await db.delete(gatewayResponses).where(inArray(gatewayResponses.id, expired))
      }
    },

    async delete(id, keyId) {
      if (!(await get(id, keyId))) return false
      await db.delete(gatewayResponses).where(eq(gatewayResponses.id, id))
      return true
    },
  }
}
