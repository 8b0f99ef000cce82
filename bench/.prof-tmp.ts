import path from 'node:path'
import Database from 'libsql'
import { startPlaza } from './lib/load.js'
import { benchToken, mulberry32 } from './lib/seed.js'
const dir = process.argv[2]
const which = process.argv[3]
const db = new Database(path.join(dir, 'plaza.db'), { readonly: true })
const users = Number((db.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n)
const publicPosts = (db.prepare(`SELECT p.id FROM posts p WHERE p.is_public = 1 ORDER BY p.id DESC LIMIT 2000`).all() as Array<{ id: number }>).map((row) => row.id)
const rng = mulberry32(1)
const anyUser = () => 1 + Math.floor(rng() * users)
const WORDS = ['coffee', 'the', 'morning', 'city', 'garden', 'music']
const next = which === 'profile' ? () => `/user/profile/${anyUser()}` : which === 'search' ? () => `/search/posts?q=${WORDS[Math.floor(rng() * WORDS.length)]}` : which === 'feed' ? () => '/posts/feed' : which === 'explore' ? () => '/posts/explore' : () => `/posts/detail/${publicPosts[Math.floor(rng() * publicPosts.length)]}`
const server = await startPlaza(dir, { workers: 1 })
let sent = 0; let shown = 0; const statuses: Record<number, number> = {}
const client = async () => { while (sent++ < 6000) { const res = await fetch(`${server.url}/api/mobile${next()}`, { headers: { authorization: `Bearer ${benchToken(1, anyUser())}` } }); const body = await res.text(); statuses[res.status] = (statuses[res.status] ?? 0) + 1; if (res.status !== 200 && !shown++) console.log(body.slice(0, 300)) } }
await Promise.all(Array.from({ length: 4 }, client))
await server.stop(); console.log(statuses)
