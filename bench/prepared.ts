/**
 * What building a query costs against running it: the session lookup every authenticated request
 * makes, on the inline reader (services.reads), built by drizzle on every call, prepared once
 * (db/prepared.ts), and as a bare `libsql` statement, in interleaved rounds over the same tokens.
 *
 *   npx tsx bench/prepared.ts [network dir] [rounds]
 *   (default: the 100,000-user network bench/social.ts caches in $TMPDIR; any Plaza data dir with sessions works)
 */
import { tmpdir } from 'node:os'
import path from 'node:path'
import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import Database from 'libsql'
import { openInlineReads } from '../src/server/db/inline.js'
import { sessions, users } from '../src/server/db/schema.js'

const DIR = process.argv[2] ?? path.join(tmpdir(), 'plaza-bench-social-u100000-p1000000-s1')
const ROUNDS = Number(process.argv[3] ?? 3)
const CALLS = 20_000
const FILE = path.join(DIR, 'plaza.db')

const raw = new Database(FILE, { readonly: true })
const hashes = (raw.prepare('SELECT token_hash FROM sessions LIMIT 1000').all() as Array<{ token_hash: string }>).map((row) => row.token_hash)
const { db, close } = openInlineReads(FILE)

const built = (hash: string, now: number) =>
  db
    .select({ sessionId: sessions.id, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, hash), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
    .limit(1)
    .get()
const preparedQuery = db
  .select({ sessionId: sessions.id, user: users })
  .from(sessions)
  .innerJoin(users, eq(users.id, sessions.userId))
  .where(and(eq(sessions.tokenHash, sql.placeholder('hash')), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql.placeholder('now'))))
  .limit(1)
  .prepare()
const bare = raw.prepare('SELECT s.id, u.* FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ? LIMIT 1')

const ways: Record<string, (hash: string, now: number) => unknown> = {
  'drizzle, built per call': built,
  'drizzle, prepared once': (hash, now) => preparedQuery.get({ hash, now }),
  'bare libsql statement': (hash, now) => bare.get(hash, now),
}
const times = new Map<string, number[]>(Object.keys(ways).map((name) => [name, []]))
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(ways)) {
    for (let i = 0; i < 1000; i++) run(hashes[i % hashes.length], Date.now())
    const started = performance.now()
    for (let i = 0; i < CALLS; i++) if (!run(hashes[i % hashes.length], Date.now())) throw new Error(`${name}: no session`)
    times.get(name)!.push(((performance.now() - started) * 1000) / CALLS)
  }
}
close()
raw.close()
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
console.log(`session lookup, ${CALLS} calls per round, ${ROUNDS} interleaved rounds; ${FILE}\n`)
console.log('| how | µs per lookup (median of rounds) |\n|---|---:|')
for (const [name, values] of times) console.log(`| ${name} | ${median(values).toFixed(1)} |`)
