/** Seeding helpers for the stories and notifications tests: rows other features own, written straight to the database. */
import { randomBytes } from 'node:crypto'
import { follows, posts, uploads } from '../../src/server/db/schema.js'
import type { TestServer } from '../helpers/server.js'

export const HOUR = 60 * 60 * 1000

/** Records an upload by `userId` as the upload pipeline would; returns its path. */
export async function seedUpload(server: TestServer, userId: number, mime: string, kind: 'stories' | 'posts' = 'stories') {
  const ext = { 'image/jpeg': 'jpg', 'image/png': 'png', 'video/mp4': 'mp4', 'video/webm': 'webm' }[mime] ?? 'jpg'
  const path = `uploads/${kind}/${randomBytes(16).toString('base64url')}.${ext}`
  await server.services.db.insert(uploads).values({ userId, kind, path, mime, size: 1234, createdAt: server.services.clock().getTime() })
  return path
}

/** `follower` follows `target` (the follow endpoint is another feature's; this is the row it writes). */
export async function seedFollow(server: TestServer, followerId: number, targetId: number) {
  await server.services.db.insert(follows).values({ followerId, followingId: targetId, createdAt: server.services.clock().getTime() })
}

export async function seedPost(server: TestServer, userId: number, content: string, image = '') {
  const [post] = await server.services.db
    .insert(posts)
    .values({ userId, content, image, createdAt: server.services.clock().getTime() })
    .returning({ id: posts.id })
  return post.id
}

/** The query plan SQLite chooses for a drizzle query, as one text. */
export async function queryPlan(server: TestServer, query: { toSQL(): { sql: string; params: unknown[] } }) {
  const { sql, params } = query.toSQL()
  const result = await server.services.db.$client.execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args: params as never })
  return result.rows.map((row) => String(row.detail)).join('\n')
}
