import { randomBytes } from 'node:crypto'
import type { Client } from '@libsql/client'
import { sql } from 'drizzle-orm'
import { writeTransaction } from '../../src/server/db/client.js'
import { uploads } from '../../src/server/db/schema.js'
import type { TestServer } from '../helpers/server.js'

/**
 * Records an upload row as the upload pipeline would, so media fields can name a real, own upload
 * without going through multipart here.
 */
export async function seedUpload(server: TestServer, userId: number, kind: 'avatars' | 'posts' | 'comments'): Promise<string> {
  const path = `uploads/${kind}/${randomBytes(12).toString('hex')}.jpg`
  await server.services.db.insert(uploads).values({ userId, kind, path, mime: 'image/jpeg', size: 1234, createdAt: Date.now() })
  return path
}

/** Creates a post through the API and returns its data. */
export async function post(server: TestServer, token: string, body: Record<string, unknown>) {
  const res = await server.request('POST', '/api/mobile/posts/create', { token, body })
  if (res.status !== 201) throw new Error(`post create failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data as { id: number; [key: string]: unknown }
}

export async function followUser(server: TestServer, token: string, userId: number) {
  const res = await server.request('POST', `/api/mobile/user/follow/${userId}`, { token })
  if (res.status !== 200) throw new Error(`follow failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data
}

export async function unfollowUser(server: TestServer, token: string, userId: number) {
  const res = await server.request('DELETE', `/api/mobile/user/unfollow/${userId}`, { token })
  if (res.status !== 200) throw new Error(`unfollow failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data
}

/** A user's timeline (the fan-out's table), newest first, read straight from the table. */
export async function timelineIdsOf(server: TestServer, userId: number): Promise<number[]> {
  const rows = await rawClient(server).execute({ sql: 'select post_id from timelines where user_id = ? order by created_at desc, post_id desc', args: [userId] })
  return rows.rows.map((row) => Number(row.post_id))
}

/** The followees whose posts `userId`'s timeline is still owed (pending backfills), read straight from the table. */
export async function pendingBackfills(server: TestServer, userId: number): Promise<number[]> {
  const rows = await rawClient(server).execute({ sql: 'select followee_id from timeline_backfills where follower_id = ? order by followee_id', args: [userId] })
  return rows.rows.map((row) => Number(row.followee_id))
}

/** The libsql client under drizzle, for raw SQL in tests (EXPLAIN QUERY PLAN, table reads). */
export function rawClient(server: TestServer): Client {
  return (server.services.db as unknown as { $client: Client }).$client
}

/** Notifications of one recipient, read straight from the table (the list endpoint is tested elsewhere). */
export async function notificationsOf(server: TestServer, userId: number) {
  const result = await rawClient(server).execute({
    sql: 'select type, actor_id, post_id from notifications where user_id = ? order by id',
    args: [userId],
  })
  return result.rows.map((r) => ({ type: r.type as string, actor_id: Number(r.actor_id), post_id: r.post_id === null ? null : Number(r.post_id) }))
}

/**
 * `db` behind a proxy that counts the queries built on it (`select` calls), to tell which reader
 * (`services.reads` or `services.scans`) a domain function used. A prepared query is built once
 * per database, so pass a fresh proxy for each question.
 */
export function countingSelects<T extends object>(db: T): { db: T; selects: () => number } {
  let selects = 0
  const proxy = new Proxy(db, {
    get(target, key) {
      // Through the query builder or as raw SQL (`values`).
      if (key === 'select' || key === 'values') selects++
      return Reflect.get(target, key)
    },
  })
  return { db: proxy, selects: () => selects }
}

/**
 * Makes every fan-out slice fail (a trigger aborts the cursor's update) until the returned
 * function is called, so posts stay pending as long as a test needs. The trigger is made and
 * dropped in write transactions, which take turns with the runner's slices.
 */
export async function holdFanout(server: TestServer): Promise<() => Promise<void>> {
  const db = server.services.db
  await writeTransaction(db, (tx) =>
    tx.run(sql.raw(`create trigger fanout_held before update on timeline_fanout begin select raise(abort, 'fan-out held by the test'); end`)),
  )
  return () => writeTransaction(db, (tx) => tx.run(sql.raw('drop trigger fanout_held'))).then(() => {})
}

/** The fan-out cursor and the newest post id, read straight from the tables. */
export async function fanoutProgress(server: TestServer): Promise<{ cursor: number; newest: number }> {
  const result = await rawClient(server).execute('select (select post_id from timeline_fanout) as cursor, (select max(id) from posts) as newest')
  return { cursor: Number(result.rows[0].cursor), newest: Number(result.rows[0].newest) }
}
