import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MAX_FRAMES } from '../../src/server/media/images.js'
import { MediaQueue, mediaQueueOptions } from '../../src/server/media/queue.js'
import { registerUser, startTestServer } from '../helpers/server.js'
import { upload } from './fixtures.js'

/** A job that runs until the test lets it finish. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { open, job: () => opened }
}

test('the queue runs at most `concurrency` jobs, starts waiting ones in order, and refuses past its capacity with 503', async () => {
  const queue = new MediaQueue({ concurrency: 2, queueLimit: 2 })
  const started: number[] = []
  const gates = Array.from({ length: 4 }, () => gate())
  const runs = gates.map((g, i) =>
    queue.run(async () => {
      started.push(i)
      await g.job()
      return i
    }),
  )
  await Promise.resolve()
  assert.equal(started, [0, 1])
  assert.equal(queue.stats, { running: 2, waiting: 2 })

  const refused = await queue.run(async () => 'never').catch((error) => error)
  assert.is(refused.code, 'SERVICE_UNAVAILABLE')
  assert.match(refused.message, /busy/)

  gates[1].open()
  assert.is(await runs[1], 1)
  assert.equal(started, [0, 1, 2], 'the freed slot goes to the first waiting job')
  gates[0].open()
  gates[2].open()
  gates[3].open()
  assert.equal(await Promise.all(runs), [0, 1, 2, 3])
  assert.equal(queue.stats, { running: 0, waiting: 0 })
})

test('a failing job frees its slot', async () => {
  const queue = new MediaQueue({ concurrency: 1, queueLimit: 0 })
  const failed = await queue.run(async () => Promise.reject(new Error('boom'))).catch((error: Error) => error.message)
  assert.is(failed, 'boom')
  assert.is(await queue.run(async () => 'next'), 'next')
})

test('PLAZA_MEDIA_CONCURRENCY and PLAZA_MEDIA_QUEUE configure the queue; bad values are refused', () => {
  assert.equal(mediaQueueOptions({ PLAZA_MEDIA_CONCURRENCY: '3', PLAZA_MEDIA_QUEUE: '5' }), { concurrency: 3, queueLimit: 5 })
  const defaults = mediaQueueOptions({})
  assert.ok(defaults.concurrency >= 1 && defaults.queueLimit >= defaults.concurrency)
  assert.throws(() => mediaQueueOptions({ PLAZA_MEDIA_CONCURRENCY: '0' }), /PLAZA_MEDIA_CONCURRENCY must be a whole number/)
})

test(`an animation of more than ${MAX_FRAMES} frames is refused with 413 before it is decoded`, async () => {
  const server = await startTestServer()
  try {
    const user = await registerUser(server)
    // Alternating colours: the GIF encoder would fold identical frames into one.
    const [red, blue] = await Promise.all(['red', 'blue'].map((background) => sharp({ create: { width: 4, height: 4, channels: 3, background } }).png().toBuffer()))
    const frames = (count: number) => Array.from({ length: count }, (_, i) => (i % 2 ? red : blue))
    const long = await sharp(frames(MAX_FRAMES + 1), { join: { animated: true } }).gif().toBuffer()
    const res = await upload(server, 'post', user.token, long, 'long.gif', 'image/gif')
    assert.is(res.status, 413)
    assert.is(res.body.status, 'error')
    assert.match(res.body.message, new RegExp(`${MAX_FRAMES + 1} frames; at most ${MAX_FRAMES}`))
    const short = await sharp(frames(3), { join: { animated: true } }).gif().toBuffer()
    assert.is((await upload(server, 'post', user.token, short, 'short.gif', 'image/gif')).status, 201)
  } finally {
    await server.close()
  }
})

test.run()
