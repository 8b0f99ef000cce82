/**
 * Generated files (code images for JSON answers, future catalog outputs) cannot fill the disk:
 * content-addressed (a repeated request reuses the stored file), expiring (not served past
 * expiry, deleted by the sweep) and capped in total size (the files closest to expiry go first).
 */
import { existsSync, rmSync, statSync } from 'node:fs'
import path from 'node:path'
import { eq } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { uploads } from '../../src/server/db/schema.js'
import { storeGenerated, sweepGenerated, type GeneratedRequest } from '../../src/server/uploads/generated.js'
import { manualClock, startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { filesOnDisk } from '../uploads/fixtures.js'

const HOUR = 3600_000
const env = { PLAZA_GENERATED_TTL: '1h', PLAZA_GENERATED_MAX_BYTES: '1000' }

/** A generated file of `size` bytes whose renders are counted. */
function request(name: string, size = 100) {
  const counter = { renders: 0 }
  const req: GeneratedRequest = {
    kind: 'codeimages',
    key: { name },
    ext: 'png',
    mime: 'image/png',
    render: async () => {
      counter.renders++
      return { body: Buffer.alloc(size, name), width: 1, height: 1 }
    },
  }
  return Object.assign(req, { counter })
}

async function rowOf(server: TestServer, filePath: string) {
  const [row] = await server.services.db.select().from(uploads).where(eq(uploads.path, filePath))
  return row
}

const codeimage = (server: TestServer, body: unknown) => server.request('POST', '/api/codeimage', { body, headers: { accept: 'application/json' } })

test('POST /api/codeimage (JSON): the same request answers the same stored file, without rendering or writing it again', async () => {
  const { clock, advance } = manualClock()
  const server = await startTestServer({ clock, env })
  try {
    const first = await codeimage(server, { codeSnippet: 'const a = 1', language: 'typescript', scale: 1, padding: 16 })
    assert.is(first.status, 200)
    assert.match(first.body.path, /^uploads\/codeimages\/[A-Za-z0-9_-]{24}\.png$/)
    const file = path.join(server.dataDir, first.body.path)
    const written = statSync(file)
    const firstExpiry = (await rowOf(server, first.body.path)).expiresAt
    assert.is(firstExpiry, clock().getTime() + HOUR)

    advance(HOUR / 2)
    // The same validated request: other key order, an alias, a number as a string, defaults spelled out.
    const again = await codeimage(server, { padding: '16', scale: 1, language: 'ts', codeSnippet: 'const a = 1', theme: 'Candy', darkMode: true })
    assert.is(again.status, 200)
    assert.equal(again.body, first.body)
    const reused = statSync(file)
    assert.is(reused.ino, written.ino, 'the stored file was not replaced')
    assert.is(reused.mtimeMs, written.mtimeMs, 'nor rewritten')
    assert.is((await rowOf(server, first.body.path)).expiresAt, clock().getTime() + HOUR, 'its expiry was refreshed')
    assert.is((await server.services.db.select().from(uploads).where(eq(uploads.kind, 'codeimages'))).length, 1)

    const other = await codeimage(server, { codeSnippet: 'const a = 2', language: 'typescript', scale: 1, padding: 16 })
    assert.is.not(other.body.path, first.body.path)
    const svg = await codeimage(server, { codeSnippet: 'const a = 1', language: 'typescript', scale: 1, padding: 16, format: 'svg' })
    assert.match(svg.body.path, /\.svg$/)
  } finally {
    await server.close()
  }
})

test('a bad request stores nothing', async () => {
  const server = await startTestServer({ env })
  try {
    const res = await codeimage(server, { codeSnippet: 'x', theme: 'rainbow' })
    assert.is(res.status, 400)
    assert.equal(filesOnDisk(server.dataDir), [])
    assert.is((await server.services.db.select().from(uploads)).length, 0)
  } finally {
    await server.close()
  }
})

test('identical requests at the same time render once', async () => {
  const server = await startTestServer({ env })
  try {
    const req = request('together')
    const [a, b] = await Promise.all([storeGenerated(server.services, req), storeGenerated(server.services, req)])
    assert.is(a.path, b.path)
    assert.is(req.counter.renders, 1)
    await storeGenerated(server.services, req)
    assert.is(req.counter.renders, 1)
  } finally {
    await server.close()
  }
})

test('past its expiry a file is no longer served at once, and the sweep deletes it with its row; asked again, it is rendered again', async () => {
  const { clock, advance } = manualClock()
  const server = await startTestServer({ clock, env })
  try {
    const req = request('expiring')
    const { path: key } = await storeGenerated(server.services, req)
    assert.is((await server.request('GET', '/' + key)).status, 200)
    advance(HOUR - 1)
    assert.is((await server.request('GET', '/' + key)).status, 200)
    advance(1)
    assert.is((await server.request('GET', '/' + key)).status, 404, 'expired: not served even before the sweep')
    assert.ok(existsSync(path.join(server.dataDir, key)))

    assert.equal(await sweepGenerated(server.services), { expired: 1, evicted: 0 })
    assert.not.ok(existsSync(path.join(server.dataDir, key)))
    assert.is(await rowOf(server, key), undefined)

    await storeGenerated(server.services, req)
    assert.is(req.counter.renders, 2)
    assert.is((await server.request('GET', '/' + key)).status, 200)
  } finally {
    await server.close()
  }
})

test('over the size cap, the files closest to expiry are evicted first; a reused file counts as fresh', async () => {
  const { clock, advance } = manualClock()
  const server = await startTestServer({ clock, env })
  try {
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => request(name, 300))
    const stored: Record<string, string> = {}
    for (const [name, req] of Object.entries({ a, b, c })) {
      stored[name] = (await storeGenerated(server.services, req)).path
      advance(1000)
    }
    await storeGenerated(server.services, a) // refreshed: now b is the oldest
    advance(1000)
    stored.d = (await storeGenerated(server.services, d)).path // 1200 bytes > 1000
    const left = filesOnDisk(server.dataDir)
    assert.equal(left, [stored.a, stored.c, stored.d].sort())
    assert.is(await rowOf(server, stored.b), undefined)
    assert.is((await server.request('GET', '/' + stored.b)).status, 404)
  } finally {
    await server.close()
  }
})

test('user uploads never expire and do not count toward the cap', async () => {
  const { clock, advance } = manualClock()
  const server = await startTestServer({ clock, env })
  try {
    await server.services.db.insert(uploads).values({ userId: null, kind: 'posts', path: 'uploads/posts/userUpload000001.jpg', mime: 'image/jpeg', size: 5000, createdAt: 0 })
    await storeGenerated(server.services, request('small', 100))
    advance(10 * HOUR)
    assert.equal(await sweepGenerated(server.services), { expired: 1, evicted: 0 })
    assert.ok(await rowOf(server, 'uploads/posts/userUpload000001.jpg'))
  } finally {
    await server.close()
  }
})

test('a server starting up deletes what expired while it was down', async () => {
  const dataDir = tempDir()
  try {
    const { clock, advance } = manualClock()
    const first = await startTestServer({ clock, env, dataDir })
    const { path: key } = await storeGenerated(first.services, request('while-down'))
    await first.close()
    assert.ok(existsSync(path.join(dataDir, key)))
    advance(2 * HOUR)
    const second = await startTestServer({ clock, env, dataDir })
    try {
      assert.not.ok(existsSync(path.join(dataDir, key)))
      assert.is(await rowOf(second, key), undefined)
    } finally {
      await second.close()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test.run()
