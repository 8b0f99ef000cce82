/**
 * Reads right after writes, with and without memory-mapping (the choice of `mmap_size` in
 * src/server/db/connection.ts). Two connections to a seeded network (bench/social.ts makes one):
 * a writer commits one like as the server does (the like, the post's counter, the author's
 * notification), then a reader looks up a session as every authenticated request does. Rounds
 * alternate the mapping sizes so that each sees the same machine state; each round likes other
 * posts, so every like is a real insert. Counters stay exact (the like and its count change together).
 *
 *   npx tsx bench/read-after-write.ts [network dir] [rounds]
 *   (default: the 100,000-user, 1,000,000-post network bench/social.ts caches in $TMPDIR)
 */
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'libsql'

const DIR = process.argv[2] ?? path.join(tmpdir(), 'plaza-bench-social-u100000-p1000000-s1')
const ROUNDS = Number(process.argv[3] ?? 3)
const LIKES = 3000
const SIZES = [0, 256 * 1024 * 1024, 2147418112]
const FILE = path.join(DIR, 'plaza.db')

function open(mmap: number) {
  const db = new Database(FILE, { timeout: 5000 })
  for (const pragma of ['synchronous = NORMAL', 'foreign_keys = ON', 'cache_size = -32000', `mmap_size = ${mmap}`]) db.exec(`PRAGMA ${pragma}`)
  return db
}

const probe = new Database(FILE, { readonly: true })
const { posts, users } = probe.prepare('SELECT (SELECT max(id) FROM posts) AS posts, (SELECT max(id) FROM users) AS users').get() as { posts: number; users: number }
const hashes = (probe.prepare('SELECT token_hash FROM sessions LIMIT 5000').all() as Array<{ token_hash: string }>).map((row) => row.token_hash)
probe.close()

/** One round: LIKES likes, each followed by a session read; the mean time of each, in µs. */
function round(mmap: number, offset: number): { write: number; read: number } {
  const writer = open(mmap)
  const reader = open(mmap)
  reader.exec('PRAGMA query_only = ON')
  const session = reader.prepare('SELECT s.id, u.* FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?').raw(true)
  const like = writer.prepare('INSERT INTO likes (post_id, user_id, created_at) SELECT id, ?, ? FROM posts WHERE id = ? ON CONFLICT DO NOTHING')
  const count = writer.prepare('UPDATE posts SET likes_count = likes_count + 1 WHERE id = ? RETURNING user_id').raw(true)
  const notify = writer.prepare("INSERT INTO notifications (user_id, actor_id, type, post_id, created_at) VALUES (?, ?, 'like', ?, ?)")
  let write = 0
  let read = 0
  for (let i = 0; i < LIKES; i++) {
    const post = 1 + ((i * 104_729 + offset * 7_919) % posts)
    const user = 1 + ((i * 7_919 + offset * 104_729) % users)
    let started = performance.now()
    writer.exec('BEGIN IMMEDIATE')
    if (like.run(user, Date.now(), post).changes) {
      const [author] = count.get(post) as [number]
      if (author !== user) notify.run(author, user, post, Date.now())
    }
    writer.exec('COMMIT')
    write += performance.now() - started
    started = performance.now()
    session.get(hashes[i % hashes.length])
    read += performance.now() - started
  }
  writer.close()
  reader.close()
  return { write: (write * 1000) / LIKES, read: (read * 1000) / LIKES }
}

const results = new Map<number, Array<{ write: number; read: number }>>(SIZES.map((size) => [size, []]))
let offset = Date.now() % 100_000
for (let r = 0; r < ROUNDS; r++) for (const size of SIZES) results.get(size)!.push(round(size, ++offset))

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]
console.log(`${LIKES} likes per round, ${ROUNDS} rounds per size, interleaved; ${FILE}\n`)
console.log('| mmap_size | like transaction (µs, median of rounds) | session read right after it (µs) |')
console.log('|---|---:|---:|')
for (const [size, rounds] of results) {
  console.log(`| ${size === 0 ? '0 (off)' : `${Math.round(size / 1024 / 1024)} MiB`} | ${median(rounds.map((r) => r.write)).toFixed(0)} | ${median(rounds.map((r) => r.read)).toFixed(1)} |`)
}
