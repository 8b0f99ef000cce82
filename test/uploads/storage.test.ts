import { readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { InvalidStorageKeyError, LocalDiskStorage } from '../../src/server/uploads/storage.js'
import { tempDir } from '../helpers/server.js'

const root = tempDir('plaza-storage-')
const storage = new LocalDiskStorage(root)

test.after(() => rmSync(root, { recursive: true, force: true }))

test('put, stat, get (whole and a range) and delete by key', async () => {
  const key = 'uploads/posts/abcdefgh12345678.jpg'
  const stored = await storage.put(key, Buffer.from('0123456789'))
  assert.is(stored.size, 10)
  assert.is((await storage.stat(key))?.size, 10)
  assert.is(await text((await storage.get(key))!), '0123456789')
  assert.is(await text((await storage.get(key, { start: 2, end: 4 }))!), '234')
  await storage.delete(key)
  assert.is(await storage.stat(key), null)
  assert.is(await storage.get(key), null)
  await storage.delete(key) // deleting twice is fine
})

test('a stream is stored; a stream that fails midway leaves no file and no temp file', async () => {
  await storage.put('uploads/stories/streamedFile0001.mp4', Readable.from([Buffer.from('ab'), Buffer.from('cd')]))
  assert.is((await storage.stat('uploads/stories/streamedFile0001.mp4'))?.size, 4)

  async function* failing() {
    yield Buffer.from('partial')
    throw new Error('source broke')
  }
  try {
    await storage.put('uploads/stories/brokenStream0001.mp4', Readable.from(failing()))
    assert.unreachable()
  } catch (error) {
    assert.is((error as Error).message, 'source broke')
  }
  assert.equal(readdirSync(path.join(root, 'uploads', 'stories')), ['streamedFile0001.mp4'])
})

test('keys that could leave the uploads folder are refused outright', async () => {
  for (const key of ['../plaza.db', 'uploads/../plaza.db', 'uploads/posts/../../x.jpg', '/etc/passwd', 'uploads/posts/a\\b.jpg', 'plaza.db', 'uploads/posts/short.jpg', 'uploads/a/b/c12345678.jpg']) {
    try {
      await storage.put(key, Buffer.from('x'))
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
})

test.run()
