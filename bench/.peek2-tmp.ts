import { startPlaza } from './lib/load.js'
import { benchToken } from './lib/seed.js'
const server = await startPlaza(process.argv[2], { workers: 1 })
for (const u of [5, 77, 901]) {
  const res = await fetch(`${server.url}/api/mobile/posts/explore`, { headers: { authorization: `Bearer ${benchToken(1, u)}` } })
  const data = JSON.parse(await res.text()).data
  console.log(u, data.posts.map((p: any) => p.media.length).join(','), data.posts.map((p: any) => p.id).slice(0, 5).join(','))
}
await server.stop()
