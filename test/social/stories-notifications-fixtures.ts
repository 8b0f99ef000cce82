/** Helpers for the stories and notifications tests: the real endpoints where they exist, seeded rows where not. */
import { randomBytes } from 'node:crypto'
import type { Client } from '@libsql/client'
import * as assert from 'uvu/assert'
import { uploads } from '../../src/server/db/schema.js'
import type { registerUser, TestServer } from '../helpers/server.js'

export const API = '/api/mobile'
export const HOUR = 60 * 60 * 1000
export type User = Awaited<ReturnType<typeof registerUser>>

/** Records an upload by `userId` as the upload pipeline would (tests need no real file); returns its path. */
export async function seedUpload(server: TestServer, userId: number, mime: string, kind: 'stories' | 'posts' = 'stories') {
  const ext = { 'image/jpeg': 'jpg', 'image/png': 'png', 'video/mp4': 'mp4', 'video/webm': 'webm' }[mime] ?? 'jpg'
  const path = `uploads/${kind}/${randomBytes(16).toString('base64url')}.${ext}`
  await server.services.db.insert(uploads).values({ userId, kind, path, mime, size: 1234, createdAt: server.services.clock().getTime() })
  return path
}

async function ok(server: TestServer, method: string, path: string, user: User, body?: unknown) {
  const res = await server.request(method, API + path, { token: user.token, body })
  assert.ok(res.status === 200 || res.status === 201, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data
}

export const follow = (server: TestServer, follower: User, target: User) => ok(server, 'POST', `/user/follow/${target.id}`, follower)

export async function createPost(server: TestServer, author: User, content: string, image?: string): Promise<number> {
  return (await ok(server, 'POST', '/posts/create', author, { content, image })).id
}

export const like = (server: TestServer, user: User, postId: number) => ok(server, 'POST', `/interactions/like/${postId}`, user)
export const comment = (server: TestServer, user: User, postId: number, content: string) =>
  ok(server, 'POST', `/interactions/comment/${postId}`, user, { content })

/** The query plan SQLite chooses for a drizzle query, as one text. */
export async function queryPlan(server: TestServer, query: { toSQL(): { sql: string; params: unknown[] } }) {
  const { sql, params } = query.toSQL()
  // drizzle() attaches the libsql client as `$client`; the project's `Db` type leaves it out.
  const client = (server.services.db as unknown as { $client: Client }).$client
  const result = await client.execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args: params as never })
  return result.rows.map((row) => String(row.detail)).join('\n')
}
