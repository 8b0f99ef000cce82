/**
 * Bytes on disk per row of each table (and its indexes), on a network seeded as bench/social.ts
 * seeds it: the figures behind docs/deploy.md's capacity model (bytes per user, per post, per
 * follow, per timeline row). Reads SQLite's dbstat (page sizes, free space included).
 *
 *   npx tsx bench/sizes.ts --users 5000 --posts 50000 [--data-dir DIR]
 */
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'libsql'
import { seedNetwork } from './lib/seed.js'

const { values } = parseArgs({ options: { users: { type: 'string', default: '5000' }, posts: { type: 'string', default: '50000' }, seed: { type: 'string', default: '1' }, 'data-dir': { type: 'string' } } })
const users = Number(values.users)
const posts = Number(values.posts)
const dir = values['data-dir'] ?? path.join(tmpdir(), `plaza-bench-social-u${users}-p${posts}-s${values.seed}`)
const network = await seedNetwork(dir, { users, posts, seed: Number(values.seed), log: (line) => process.stderr.write(line + '\n') })
const db = new Database(network.dbFile, { readonly: true })
// Each index's pages count towards its table.
const owners = new Map((db.prepare(`select name, tbl_name from sqlite_master where type in ('table', 'index')`).all() as Array<{ name: string; tbl_name: string }>).map((row) => [row.name, row.tbl_name]))
const bytes = new Map<string, number>()
for (const row of db.prepare('select name, sum(pgsize) as size from dbstat group by name').all() as Array<{ name: string; size: number }>) {
  const owner = owners.get(row.name) ?? row.name
  const table = owner.startsWith('posts_fts') ? 'posts_fts' : owner.startsWith('users_fts') ? 'users_fts' : owner
  bytes.set(table, (bytes.get(table) ?? 0) + Number(row.size))
}
console.log(`| table | rows | MiB | bytes per row |\n|---|---:|---:|---:|`)
let total = 0
for (const [table, size] of [...bytes].sort((a, b) => b[1] - a[1])) {
  total += size
  const source = table === 'posts_fts' ? 'posts' : table === 'users_fts' ? 'users' : table
  let rows = 0
  try {
    rows = Number((db.prepare(`select count(*) as n from "${source}"`).get() as { n: number }).n)
  } catch {
    rows = 0
  }
  console.log(`| ${table} | ${rows.toLocaleString('en')} | ${(size / 2 ** 20).toFixed(1)} | ${rows ? Math.round(size / rows) : '-'} |`)
}
console.log(`\ntotal ${(total / 2 ** 20).toFixed(1)} MiB for ${users.toLocaleString('en')} users and ${posts.toLocaleString('en')} posts`)
db.close()
