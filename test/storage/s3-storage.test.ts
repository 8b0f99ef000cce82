import { Readable } from 'node:stream'
import { buffer, text } from 'node:stream/consumers'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ConfigError } from '../../src/server/config.js'
import { createS3Storage, ObjectStoreError, type S3Storage } from '../../src/server/uploads/s3-storage.js'
import { parseStorageConfig, type S3StorageConfig } from '../../src/server/uploads/storage-config.js'
import { InvalidStorageKeyError, STAGED_GRACE_MS } from '../../src/server/uploads/storage.js'
import { startFakeS3, type FakeS3 } from './fake-s3.js'

let s3: FakeS3
let storage: S3Storage

function open(env: NodeJS.ProcessEnv): S3Storage {
  return createS3Storage(parseStorageConfig(env) as S3StorageConfig)
}

test.before(async () => {
  s3 = await startFakeS3({ pageSize: 2 })
  storage = open(s3.env('site/media'))
})
test.after(async () => {
  await storage.close()
  await s3.close()
})

const staged = () => [...s3.objects.keys()].filter((key) => key.includes('/.staging/'))

test('stage, commit, stat, get (whole and a range) and delete reach the bucket under the prefix', async () => {
  const key = 'uploads/posts/abcdefgh12345678.jpg'
  const file = await storage.stage(key, Buffer.from('0123456789'))
  assert.is(file.size, 10)
  assert.is(await storage.stat(key), null, 'a staged file is not visible under its key')
  assert.is(staged().length, 1)
  const stored = await file.commit()
  assert.is(stored.size, 10)
  assert.equal(staged(), [], 'the staged object is gone once committed')
  const object = s3.objects.get(`site/media/${key}`)
  assert.ok(object, 'the object lies under the prefix')
  assert.is(object!.body.toString(), '0123456789')
  assert.is(object!.contentType, 'image/jpeg')
  assert.is((await storage.stat(key))?.size, 10)
  assert.is(await text((await storage.get(key))!), '0123456789')
  assert.is(await text((await storage.get(key, { start: 2, end: 4 }))!), '234')
  await storage.delete(key)
  assert.not.ok(s3.objects.has(`site/media/${key}`))
  assert.is(await storage.stat(key), null)
  assert.is(await storage.get(key), null)
  await storage.delete(key) // deleting twice is fine
  assert.ok(s3.requests.every((request) => request.auth === 'header'), 'every call is signed')
})

test('a large stream goes up in bounded parts (multipart) and comes back whole', async () => {
  const size = 19 * 1024 * 1024 + 123
  const source = Buffer.alloc(size)
  for (let i = 0; i < size; i++) source[i] = (i * 2654435761) >>> 24
  const chunks = function* () {
    for (let at = 0; at < size; at += 64 * 1024) yield source.subarray(at, at + 64 * 1024)
  }
  const before = s3.requests.length
  const file = await storage.stage('uploads/stories/bigStreamedVideo.mp4', Readable.from(chunks()))
  assert.is(file.size, size)
  await file.commit()
  const operations = s3.requests.slice(before).map((request) => request.operation)
  assert.is(operations.filter((op) => op === 'UploadPart').length, 3, '8 MiB parts')
  assert.ok(operations.includes('CompleteMultipartUpload'))
  assert.not.ok(operations.includes('PutObject'), 'never the whole file in one request')
  const back = await buffer((await storage.get('uploads/stories/bigStreamedVideo.mp4'))!)
  assert.ok(back.equals(source))
  assert.is(s3.objects.get('site/media/uploads/stories/bigStreamedVideo.mp4')!.contentType, 'video/mp4')
  await storage.delete('uploads/stories/bigStreamedVideo.mp4')
})

test('a stream that fails midway leaves nothing: no object, no staged object, no unfinished upload', async () => {
  class TooLarge extends Error {}
  const thrown = new TooLarge('source broke')
  async function* failing() {
    yield Buffer.alloc(9 * 1024 * 1024, 1)
    throw thrown
  }
  try {
    await storage.stage('uploads/stories/brokenStream0001.mp4', Readable.from(failing()))
    assert.unreachable()
  } catch (error) {
    assert.is(error, thrown, "the source's own error comes out as it is (a 413 stays a 413), not as a store failure")
  }
  assert.equal(staged(), [])
  assert.is(s3.uploads.size, 0)
  const small = await storage.stage('uploads/posts/droppedFile00001.jpg', Buffer.from('x'))
  await small.discard()
  assert.equal(staged(), [])
})

test('the sweep commits staged files that were recorded, removes old unrecorded ones and aborts old unfinished uploads', async () => {
  const recorded = await storage.stage('uploads/posts/recordedStaged01.jpg', Buffer.from('kept'))
  await storage.stage('uploads/posts/strayStagedFile1.jpg', Buffer.from('stray'))
  await storage.stage('uploads/posts/youngStrayFile01.jpg', Buffer.from('young'))
  s3.uploads.set('abandoned', { key: 'site/media/uploads/.staging/posts.abandonedUpload.jpg.AAAAAAAAAAAA', initiated: new Date(), contentType: 'image/jpeg', parts: new Map() })
  s3.uploads.set('running', { key: 'site/media/uploads/.staging/posts.runningUpload01.jpg.BBBBBBBBBBBB', initiated: new Date(), contentType: 'image/jpeg', parts: new Map() })
  // Only the stray file and the abandoned upload are older than the grace.
  for (const key of staged()) if (key.includes('strayStagedFile1')) s3.age(key, STAGED_GRACE_MS + 1000)
  s3.age('site/media/uploads/.staging/posts.abandonedUpload', STAGED_GRACE_MS + 1000)

  const report = await storage.sweep(async (key) => key === 'uploads/posts/recordedStaged01.jpg')
  assert.equal(report.committed, ['uploads/posts/recordedStaged01.jpg'])
  assert.is(report.removed, 2)
  assert.is(s3.objects.get('site/media/uploads/posts/recordedStaged01.jpg')?.body.toString(), 'kept')
  assert.equal(staged().map((key) => key.split('/').pop()!.split('.')[1]), ['youngStrayFile01'], 'a young unrecorded file may still be recorded by its writer')
  assert.equal([...s3.uploads.keys()], ['running'])
  // The writer of the recorded file commits after the sweep did: fine.
  assert.is((await recorded.commit()).size, 4)
  s3.uploads.clear()
})

test('a signed URL fetches the file with the type asked for; a tampered one is refused', async () => {
  const signing = open(s3.env('site/media', { PLAZA_STORAGE_SERVE: 'redirect', PLAZA_S3_PRESIGN_TTL: '60' }))
  await (await signing.stage('uploads/tts/signedUrlFile0001.wav', Buffer.from('RIFFdata'))).commit()
  const redirect = await signing.redirectFor!('uploads/tts/signedUrlFile0001.wav', 'audio/wav')
  assert.is(redirect.maxAgeSeconds, 30)
  const answer = await fetch(redirect.url)
  assert.is(answer.status, 200)
  assert.is(answer.headers.get('content-type'), 'audio/wav')
  assert.is(await answer.text(), 'RIFFdata')
  assert.is(s3.requests.at(-1)!.auth, 'query')
  const tampered = redirect.url.replace('signedUrlFile0001', 'signedUrlFile0002')
  assert.is((await fetch(tampered)).status, 403)
  assert.is(storage.redirectFor, undefined, 'proxy mode signs nothing')
  await signing.close()
})

test('keys outside the storage shape are refused before any request', async () => {
  const before = s3.requests.length
  for (const key of ['uploads/../plaza.db', 'uploads/posts/short.jpg', '../x', 'uploads/.staging/posts.abcdefgh123.jpg']) {
    try {
      await storage.get(key)
      assert.unreachable()
    } catch (error) {
      assert.instance(error, InvalidStorageKeyError)
    }
  }
  assert.is(s3.requests.length, before)
})

test('a wrong secret fails the start-up check with one line naming the store, never the secret', async () => {
  const wrong = open(s3.env('site/media', { PLAZA_S3_SECRET_ACCESS_KEY: 'not-the-secret-at-all' }))
  try {
    await wrong.check()
    assert.unreachable()
  } catch (error) {
    assert.instance(error, ConfigError)
    const message = (error as Error).message
    assert.match(message, /^object storage s3:\/\/plaza-test\/site\/media cannot be used: SignatureDoesNotMatch/)
    assert.not.match(message, /\n/)
    assert.not.match(message, /not-the-secret-at-all/)
  }
  try {
    await wrong.stat('uploads/posts/abcdefgh12345678.jpg')
    assert.unreachable()
  } catch (error) {
    // A HEAD answer has no body, so only its status tells what went wrong, as with S3 itself.
    assert.instance(error, ObjectStoreError)
    assert.match((error as Error).message, /^object storage s3:\/\/plaza-test\/site\/media: reading a file failed: .*HTTP 403/)
  }
  await wrong.close()
  await storage.check()
})

test.run()
