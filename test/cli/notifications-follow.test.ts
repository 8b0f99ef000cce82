/**
 * `plaza social notifications --follow`: remote (SSE with reconnection and Last-Event-ID, JSON lines)
 * and embedded (the same feed over the data directory, human lines); Ctrl-C exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { sql } from 'drizzle-orm'
import { createApp } from '../../src/server/app.js'
import { loadConfig } from '../../src/server/config.js'
import { writeTransaction } from '../../src/server/db/client.js'
import { silentLogger } from '../../src/server/logger.js'
import { createServices } from '../../src/server/services.js'
import { BIN } from '../helpers/cli.js'
import { registerUser, startTestServer, tempDir } from '../helpers/server.js'
import { API, comment, createPost, like } from '../social/stories-notifications-fixtures.js'

interface Follower {
  child: ChildProcess
  lines: string[]
  stderr: () => string
  exited: Promise<number | null>
  /** Resolves once `count` lines were printed; rejects after a generous timeout. */
  lines_(count: number, timeoutMs?: number): Promise<string[]>
}

function follow(args: string[], env: NodeJS.ProcessEnv): Follower {
  const configHome = tempDir('plaza-cli-config-')
  const child = spawn(process.execPath, [BIN, 'social', 'notifications', '--follow', ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, XDG_CONFIG_HOME: configHome, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  let pending = ''
  let stderr = ''
  const waiters = new Set<() => void>()
  child.stdout!.on('data', (chunk) => {
    pending += chunk
    const parts = pending.split('\n')
    pending = parts.pop()!
    lines.push(...parts)
    for (const waiter of [...waiters]) waiter()
  })
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => {
    rmSync(configHome, { recursive: true, force: true })
    resolve(code)
  }))
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    lines_(count, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (lines.length < count) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve(lines)
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`timed out waiting for ${count} lines; got ${JSON.stringify(lines)}; stderr: ${stderr}`))
        }, timeoutMs)
        waiters.add(check)
        check()
      })
    },
  }
}

async function waitUntil(check: () => boolean, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

test('remote --follow --json: one JSON object per line; after the server restarts it resumes with Last-Event-ID (the missed one, once); Ctrl-C exits 0', async () => {
  const env = { PLAZA_STREAM_RETRY: '200ms' }
  // Our own directory: the first server's close() would remove one it made.
  const dataDir = tempDir('plaza-cli-data-')
  const first = await startTestServer({ env, dataDir })
  const alice = await registerUser(first)
  const bob = await registerUser(first)
  const postId = await createPost(first, alice, 'follow me')
  const follower = follow(['--json', '--url', first.url], { PLAZA_TOKEN: alice.token })
  let second: Awaited<ReturnType<typeof restart>> | null = null
  try {
    await waitUntil(() => first.services.notificationFeed.size === 1, 'the follower to connect')
    await like(first, bob, postId)
    await follower.lines_(1)
    const liked = JSON.parse(follower.lines[0])
    assert.is(liked.type, 'like')
    assert.is(liked.actor_username, bob.username)
    assert.is(liked.post_id, postId)

    // The server goes away; a notification is written while the follower is disconnected.
    await first.close()
    second = await restart(dataDir, Number(new URL(first.url).port), env)
    await writeTransaction(second.services.db, (tx) =>
      tx.run(sql`insert into notifications (user_id, actor_id, type, created_at) values (${alice.id}, ${bob.id}, 'follow', 0)`),
    )
    await second.listen()
    await waitUntil(() => second!.services.notificationFeed.size === 1, 'the follower to reconnect')
    await follower.lines_(2)
    const resumed = JSON.parse(follower.lines[1])
    assert.is(resumed.type, 'follow')
    assert.ok(resumed.id > liked.id)

    const res = await fetch(`${second.url}${API}/interactions/comment/${postId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bob.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'live again' }),
    })
    assert.is(res.status, 201)
    await follower.lines_(3)
    const ids = follower.lines.map((line) => JSON.parse(line).id)
    assert.is(new Set(ids).size, 3, 'no duplicates')
    assert.is(JSON.parse(follower.lines[2]).type, 'comment')

    follower.child.kill('SIGINT')
    assert.is(await follower.exited, 0, follower.stderr())
    assert.is(follower.lines.length, 3)
  } finally {
    follower.child.kill('SIGKILL')
    if (second) await second.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
})

/** A server over an existing data directory, on a given port, not yet listening (so rows can be written first). */
async function restart(dataDir: string, port: number, env: NodeJS.ProcessEnv) {
  const config = loadConfig({ port, host: '127.0.0.1', dataDir, rateLimits: false }, env)
  const services = await createServices(config, { logger: silentLogger })
  const app = createApp(services)
  return {
    services,
    url: `http://127.0.0.1:${port}`,
    listen: () => app.listen(port, '127.0.0.1'),
    close: () => app.close(),
  }
}

test('embedded --follow: the data directory is followed with no server; human lines like the list; Ctrl-C exits 0', async () => {
  const server = await startTestServer()
  const alice = await registerUser(server)
  const bob = await registerUser(server)
  const postId = await createPost(server, alice, 'quiet post')
  const follower = follow(['--data-dir', server.dataDir], { PLAZA_TOKEN: alice.token })
  try {
    // The follower starts after the newest notification, at a moment this test cannot see: comment until one is printed.
    for (let i = 0; follower.lines.length === 0; i++) {
      assert.ok(i < 100, `nothing printed; stderr: ${follower.stderr()}`)
      await comment(server, bob, postId, `hello ${i}`)
      await follower.lines_(1, 300).catch(() => {})
    }
    assert.match(follower.lines[0], new RegExp(`^• \\d+  @${bob.username} \\(Name ${bob.username}\\) commented on your post: "quiet post" · just now$`), follower.lines[0])
    follower.child.kill('SIGINT')
    assert.is(await follower.exited, 0, follower.stderr())
  } finally {
    follower.child.kill('SIGKILL')
    await server.close()
  }
})

test('--follow refuses list flags (exit 2), and needs a session (exit 4)', async () => {
  const dataDir = tempDir('plaza-cli-data-')
  try {
    const usage = follow(['--page', '2', '--data-dir', dataDir], { PLAZA_TOKEN: 'plz_x' })
    assert.is(await usage.exited, 2)
    assert.match(usage.stderr(), /--page.*cannot also be provided when using --follow|--follow.*--page/)
    const nobody = follow(['--data-dir', dataDir], {})
    assert.is(await nobody.exited, 4)
    assert.match(nobody.stderr(), /not logged in/)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test.run()
