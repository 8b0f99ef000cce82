import { existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { InvalidStorageKeyError, LocalDiskStorage, STAGED_GRACE_MS } from '../../src/server/uploads/storage.js'
import { tempDir } from '../helpers/server.js'

const root = tempDir('plaza-storage-')
const storage = new LocalDiskStorage(root)
const staging = path.join(root, 'uploads', '.staging')

test.after(() => rmSync(root, { recursive: true, force: true }))

async function put(key: string, body: Buffer | Readable) {
  return (await storage.stage(key, body)).commit()
}

test('stage then commit, stat, get (whole and a range) and delete by key', async () => {
  const key = 'uploads/posts/abcdefgh12345678.jpg'
  const staged = await storage.stage(key, Buffer.from('0123456789'))
  assert.is(staged.size, 10)
  assert.is(await storage.stat(key), null, 'a staged file is not visible under its key')
  assert.is((await staged.commit()).size, 10)
  assert.is((await storage.stat(key))?.size, 10)
  assert.is(await text((await storage.get(key))!), '0123456789')
  assert.is(await text((await storage.get(key, { start: 2, end: 4 }))!), '234')
  await storage.delete(key)
  assert.is(await storage.stat(key), null)
  assert.is(await storage.get(key), null)
  await storage.delete(key) // deleting twice is fine
  assert.equal(readdirSync(staging), [])
})

test('discard removes a staged file; committing twice (a sweep got there first) is fine', async () => {
  const dropped = await storage.stage('uploads/posts/droppedFile00001.jpg', Buffer.from('x'))
  await dropped.discard()
  assert.equal(readdirSync(staging), [])
  assert.is(await storage.stat('uploads/posts/droppedFile00001.jpg'), null)

  const staged = await storage.stage('uploads/posts/twiceCommitted01.jpg', Buffer.from('abc'))
  await storage.sweep(async () => true)
  assert.is((await staged.commit()).size, 3)
})

test('a stream is stored; a stream that fails midway leaves no file, staged or partial', async () => {
  await put('uploads/stories/streamedFile0001.mp4', Readable.from([Buffer.from('ab'), Buffer.from('cd')]))
  assert.is((await storage.stat('uploads/stories/streamedFile0001.mp4'))?.size, 4)

  async function* failing() {
    yield Buffer.from('partial')
    throw new Error('source broke')
  }
  try {
    await storage.stage('uploads/stories/brokenStream0001.mp4', Readable.from(failing()))
    assert.unreachable()
  } catch (error) {
    assert.is((error as Error).message, 'source broke')
  }
  assert.equal(readdirSync(path.join(root, 'uploads', 'stories')), ['streamedFile0001.mp4'])
  assert.equal(readdirSync(staging), [])
})

test('sweep: a recorded staged file is moved into place; unrecorded and partial ones are removed once past the grace', async () => {
  const recorded = 'uploads/posts/recordedStaged01.jpg'
  const unrecorded = 'uploads/posts/unrecordedStg001.jpg'
  const young = 'uploads/posts/youngUnrecorded1.jpg'
  for (const key of [recorded, unrecorded, young]) await storage.stage(key, Buffer.from(key))
  // What a crash in the middle of writing leaves: a `.part` file.
  writeFileSync(path.join(staging, 'posts.crashedWrite0001.jpg.abc.part'), 'half')
  const old = (Date.now() - STAGED_GRACE_MS - 60_000) / 1000
  for (const name of ['posts.unrecordedStg001.jpg', 'posts.crashedWrite0001.jpg.abc.part']) utimesSync(path.join(staging, name), old, old)

  const asked: string[] = []
  const report = await storage.sweep(async (key) => {
    asked.push(key)
    return key === recorded
  })
  assert.equal(report.committed, [recorded])
  assert.is(report.removed, 2)
  assert.is(await text((await storage.get(recorded))!), recorded)
  assert.is(await storage.stat(unrecorded), null)
  // Another process may still be between staging and recording this one: it is left alone.
  assert.equal(readdirSync(staging), ['posts.youngUnrecorded1.jpg'])
  assert.not.ok(asked.some((key) => key.includes('crashedWrite')), 'a partial file is never committed')
})

test('folders are 0700 and files 0600 whatever the umask', async () => {
  for (const umask of [0o022, 0o000, 0o277]) {
    const dir = tempDir('plaza-storage-modes-')
    const previous = process.umask(umask)
    try {
      const own = new LocalDiskStorage(dir)
      await (await own.stage('uploads/avatars/privateModes001.png', Buffer.from('x'))).commit()
      for (const folder of [dir, path.join(dir, 'uploads'), path.join(dir, 'uploads', 'avatars'), path.join(dir, 'uploads', '.staging')]) {
        assert.is(statSync(folder).mode & 0o777, 0o700, `${folder} with umask ${umask.toString(8)}`)
      }
      assert.is(statSync(path.join(dir, 'uploads', 'avatars', 'privateModes001.png')).mode & 0o777, 0o600, `file with umask ${umask.toString(8)}`)
    } finally {
      process.umask(previous)
      rmSync(dir, { recursive: true, force: true })
    }
  }
})

test('keys that could leave the uploads folder are refused outright', async () => {
  for (const key of ['../plaza.db', 'uploads/../plaza.db', 'uploads/posts/../../x.jpg', '/etc/passwd', 'uploads/posts/a\\b.jpg', 'plaza.db', 'uploads/posts/short.jpg', 'uploads/a/b/c12345678.jpg', 'uploads/.staging/posts.abcdefgh12.jpg']) {
    try {
      await storage.stage(key, Buffer.from('x'))
      assert.unreachable(key)
    } catch (error) {
      assert.instance(error, InvalidStorageKeyError, key)
    }
    try {
      await storage.stat(key)
      assert.unreachable(key)
    } catch (error) {
      assert.instance(error, InvalidStorageKeyError, key)
    }
  }
  assert.not.ok(existsSync(path.join(root, 'plaza.db')))
})

test.run()
