/**
 * Files on disk: an interrupted upload never leaves an orphan (staged, recorded, then moved into
 * place; the start-up sweep finishes or removes what a crash left), and the data directory is
 * private whatever the umask.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { uploads } from '../../src/server/db/schema.js'
import { storeFile } from '../../src/server/uploads/pipeline.js'
import { STAGED_GRACE_MS } from '../../src/server/uploads/storage.js'
import { registerUser, startTestServer, tempDir } from '../helpers/server.js'
import { filesOnDisk, solidImage, upload } from '../uploads/fixtures.js'

const mode = (file: string) => statSync(file).mode & 0o777

/** What storeFile does up to the crash: the file is staged and its row committed, but it was never moved into place. */
async function stageAndRecord(server: Awaited<ReturnType<typeof startTestServer>>, key: string, body: Buffer) {
  await server.services.storage.stage(key, body)
  await server.services.db.insert(uploads).values({ userId: null, kind: 'posts', path: key, mime: 'image/jpeg', size: body.length, createdAt: 0 })
}

test('a crash after the row commits: the start-up sweep moves the staged file into place and it is served', async () => {
  const dataDir = tempDir()
  try {
    const body = await solidImage(12, 8, 'jpeg')
    const key = 'uploads/posts/crashedAfterRow01.jpg'
    const first = await startTestServer({ dataDir })
    await stageAndRecord(first, key, body)
    assert.is((await first.request('GET', '/' + key)).status, 404, 'not in place before the sweep')
    await first.close()

    const second = await startTestServer({ dataDir })
    try {
      const res = await second.request('GET', '/' + key)
      assert.is(res.status, 200)
      assert.ok(Buffer.compare(res.body, body) === 0)
      assert.equal(readdirSync(path.join(dataDir, 'uploads', '.staging')), [])
    } finally {
      await second.close()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test('a crash before the row commits: the staged file and a half-written one are removed at start-up', async () => {
  const dataDir = tempDir()
  try {
    const first = await startTestServer({ dataDir })
    await first.services.storage.stage('uploads/posts/crashedNoRow0001.jpg', Buffer.from('never recorded'))
    await first.close()
    const staging = path.join(dataDir, 'uploads', '.staging')
    writeFileSync(path.join(staging, 'stories.crashedWriting01.mp4.Zm9v.part'), 'half a video')
    // The crash was long ago: younger files may belong to another process still writing them.
    const old = (Date.now() - STAGED_GRACE_MS - 60_000) / 1000
    for (const name of readdirSync(staging)) utimesSync(path.join(staging, name), old, old)

    const second = await startTestServer({ dataDir })
    try {
      assert.equal(filesOnDisk(dataDir), [])
      assert.is((await second.request('GET', '/uploads/posts/crashedNoRow0001.jpg')).status, 404)
    } finally {
      await second.close()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test('a row that cannot be written leaves no file behind, staged or in place', async () => {
  const server = await startTestServer()
  try {
    const before = filesOnDisk(server.dataDir)
    try {
      // No such user: the foreign key refuses the row.
      await storeFile(server.services, { kind: 'posts', userId: 999_999, body: await solidImage(4, 4, 'jpeg'), ext: 'jpg', mime: 'image/jpeg', origin: server.url })
      assert.unreachable()
    } catch (error) {
      assert.match(String((error as Error)?.cause ?? error), /FOREIGN KEY/)
    }
    assert.equal(filesOnDisk(server.dataDir), before)
  } finally {
    await server.close()
  }
})

test('the data directory is 0700, the database (and -wal, -shm) 0600, upload folders 0700 and files 0600, whatever the umask', async () => {
  for (const umask of [0o022, 0o000]) {
    const previous = process.umask(umask)
    const dataDir = path.join(tempDir(), 'data')
    try {
      const server = await startTestServer({ dataDir })
      try {
        const user = await registerUser(server)
        const res = await upload(server, 'post', user.token, await solidImage(10, 10, 'jpeg'))
        assert.is(res.status, 201)
        const label = `umask ${umask.toString(8).padStart(3, '0')}`
        assert.is(mode(dataDir), 0o700, `data dir, ${label}`)
        for (const name of ['plaza.db', 'plaza.db-wal', 'plaza.db-shm']) {
          assert.ok(existsSync(path.join(dataDir, name)), name)
          assert.is(mode(path.join(dataDir, name)), 0o600, `${name}, ${label}`)
        }
        for (const folder of ['uploads', 'uploads/posts', 'uploads/.staging']) assert.is(mode(path.join(dataDir, folder)), 0o700, `${folder}, ${label}`)
        assert.is(mode(path.join(dataDir, res.body.data.path)), 0o600, `uploaded file, ${label}`)
      } finally {
        await server.close()
      }
    } finally {
      process.umask(previous)
      rmSync(path.dirname(dataDir), { recursive: true, force: true })
    }
  }
})

test('a data directory left readable by an older version is made private when opened', async () => {
  const dataDir = tempDir()
  try {
    const first = await startTestServer({ dataDir })
    await first.close()
    mkdirSync(path.join(dataDir, 'uploads', 'posts'), { recursive: true })
    for (const folder of [dataDir, path.join(dataDir, 'uploads'), path.join(dataDir, 'uploads', 'posts')]) chmodSync(folder, 0o755)
    chmodSync(path.join(dataDir, 'plaza.db'), 0o644)
    const server = await startTestServer({ dataDir })
    try {
      const user = await registerUser(server)
      assert.is((await upload(server, 'post', user.token, await solidImage(6, 6, 'jpeg'))).status, 201)
      assert.is(mode(dataDir), 0o700)
      assert.is(mode(path.join(dataDir, 'plaza.db')), 0o600)
      assert.is(mode(path.join(dataDir, 'uploads')), 0o700)
      assert.is(mode(path.join(dataDir, 'uploads', 'posts')), 0o700)
    } finally {
      await server.close()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test.run()
