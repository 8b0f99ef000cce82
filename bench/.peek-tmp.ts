import { startPlaza } from './lib/load.js'
import { benchToken } from './lib/seed.js'
const server = await startPlaza(process.argv[2], { workers: 1 })
for (const p of ['/posts/feed', '/posts/explore', '/posts/detail/' + process.argv[3]]) {
  const res = await fetch(`${server.url}/api/mobile${p}`, { headers: { authorization: `Bearer ${benchToken(1, 5)}` } })
  const text = await res.text()
  const data = JSON.parse(text).data
  console.log(p, res.status, text.length, JSON.stringify(data.posts?.[0] ?? data.post).slice(0, 700), data.comments ? `comments ${data.comments.length} replies ${data.comments.reduce((n: number, c: any) => n + c.replies.length, 0)}` : '')
}
await server.stop()
