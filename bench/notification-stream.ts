/**
 * Live notification latency across processes: a server (this process) with one open
 * GET /notifications/stream, and a second process writing notifications into the same database
 * file, one at a time at random intervals (so writes land at every phase of the poll). Measured:
 * from just after the writer's commit to the event's arrival at the SSE client, both read from
 * the shared wall clock (`performance.timeOrigin + performance.now()`). The reference is the poll
 * interval: a delivery costs at most one poll plus a read, so the median should sit near half of it.
 * Run: npx tsx bench/notification-stream.ts [notifications] [pollMs]
 */
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import { createParser } from 'eventsource-parser'
import { createApp } from '../src/server/app.js'
import { loadConfig } from '../src/server/config.js'
import { writeTransaction } from '../src/server/db/client.js'
import { silentLogger } from '../src/server/logger.js'
import { createServices } from '../src/server/services.js'

const now = () => performance.timeOrigin + performance.now()

interface Written {
  id: number
  at: number
}

if (process.argv[2] === '--writer') {
  // The other process: the same database file, no server.
  const [, , , dataDir, recipient, actor, countText] = process.argv
  const services = await createServices(loadConfig({ dataDir, rateLimits: false }, {}), { logger: silentLogger, maintenance: false, readers: false })
  for (let i = 0; i < Number(countText); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80))
    const row = await writeTransaction(services.db, (tx) =>
      tx.get<{ id: number }>(sql`insert into notifications (user_id, actor_id, type, created_at) values (${Number(recipient)}, ${Number(actor)}, 'follow', ${Date.now()}) returning id`),
    )
    process.send!({ id: row.id, at: now() } satisfies Written)
  }
  await services.close()
  process.disconnect()
} else {
  const COUNT = Number(process.argv[2] ?? 300)
  const POLL_MS = Number(process.argv[3] ?? 250)
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plaza-bench-stream-'))
  const services = await createServices(loadConfig({ port: 0, host: '127.0.0.1', dataDir, rateLimits: false }, { PLAZA_STREAM_POLL: String(POLL_MS) }), { logger: silentLogger })
  const app = createApp(services)
  const url = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`
  const register = async (username: string) => {
    const res = await fetch(`${url}/api/mobile/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, email: `${username}@example.com`, password: 'correct horse', full_name: username }),
    })
    const body = (await res.json()) as { data: { token: string; user: { id: number } } }
    return { token: body.data.token, id: body.data.user.id }
  }
  const alice = await register('alice')
  const bob = await register('bob')

  const arrived = new Map<number, number>()
  const controller = new AbortController()
  const response = await fetch(`${url}/api/mobile/notifications/stream`, { headers: { authorization: `Bearer ${alice.token}` }, signal: controller.signal })
  const parser = createParser({ onEvent: (event) => event.event === 'notification' && arrived.set(Number(event.id), now()) })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  void (async () => {
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) parser.feed(decoder.decode(read.value, { stream: true }))
    } catch {}
  })()
  // The stream is live once the server has sent its first bytes and the feed has it.
  while (services.notificationFeed.size === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  await new Promise((resolve) => setTimeout(resolve, 300))

  const written: Written[] = []
  const writer = fork(fileURLToPath(import.meta.url), ['--writer', dataDir, String(alice.id), String(bob.id), String(COUNT)])
  writer.on('message', (message) => written.push(message as Written))
  await new Promise((resolve) => writer.on('exit', resolve))
  const deadline = Date.now() + 5000
  while (arrived.size < written.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))

  const latencies = written.filter((w) => arrived.has(w.id)).map((w) => arrived.get(w.id)! - w.at).sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
  const ms = (value: number) => `${value.toFixed(1)} ms`
  console.log(`notifications written by another process: ${written.length}, delivered: ${latencies.length}, lost: ${written.length - latencies.length}`)
  console.log(`poll interval ${POLL_MS} ms: p50 ${ms(at(0.5))} (${(at(0.5) / POLL_MS).toFixed(2)}× the interval), p99 ${ms(at(0.99))} (${(at(0.99) / POLL_MS).toFixed(2)}×), max ${ms(latencies.at(-1)!)}, min ${ms(latencies[0])}`)
  controller.abort()
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
}
