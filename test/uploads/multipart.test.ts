/**
 * Truncated and malformed multipart bodies, sent byte for byte over a raw socket (fetch and
 * FormData only ever send well-formed forms). Each must be a 400 in the envelope, or a closed
 * connection when the client itself went away, and the server must keep answering.
 */
import net from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type RegisteredUser, startServerWithUser, type TestServer } from '../helpers/server.js'
import { filesOnDisk, solidImage, upload } from './fixtures.js'

let server: TestServer
let user: RegisteredUser
test.before(async () => void ({ server, user } = await startServerWithUser()))
test.after(() => server.close())

const BOUNDARY = 'plaza-raw-boundary'

function partHead(disposition: string): string {
  return `--${BOUNDARY}\r\ncontent-disposition: form-data; ${disposition}\r\ncontent-type: application/octet-stream\r\n\r\n`
}

interface RawAnswer {
  /** 0 when the server closed the connection without answering. */
  status: number
  body: string
}

/**
 * POSTs `body` to /api/mobile/upload/<route> and reads the answer until the server closes the
 * connection. With `declaredLength` (more than is sent) the client goes away after the body.
 */
function rawUpload(route: string, body: Buffer, declaredLength?: number): Promise<RawAnswer> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) })
    })
    socket.write(
      `POST /api/mobile/upload/${route} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${user.token}\r\n` +
        `content-type: multipart/form-data; boundary=${BOUNDARY}\r\ncontent-length: ${declaredLength ?? body.length}\r\nconnection: close\r\n\r\n`,
    )
    socket.write(body)
    if (declaredLength !== undefined) socket.end()
  })
}

async function stillServing() {
  assert.is((await server.request('GET', '/health')).status, 200)
  const small = await upload(server, 'post', user.token, await solidImage(16, 16, 'png'), 'ok.png', 'image/png')
  assert.is(small.status, 201, 'uploads still work afterwards')
}

function assertBadForm(answer: RawAnswer) {
  assert.is(answer.status, 400, answer.body)
  const envelope = JSON.parse(answer.body)
  assert.is(envelope.status, 'error')
  assert.is(envelope.data, null)
  assert.type(envelope.timestamp, 'number')
  assert.match(envelope.message, /multipart form could not be read/)
  assert.not.match(envelope.message, /\s+at\s/, 'no stack trace')
}

const photo = await solidImage(64, 64, 'png')

test('a form cut off inside a part that is not the file is 400, and the server does not crash', async () => {
  const files = filesOnDisk(server.dataDir)
  for (const disposition of ['name="attachment"; filename="notes.txt"', 'name="caption"']) {
    const body = Buffer.concat([Buffer.from(partHead(disposition)), Buffer.from('half of a part that never ends')])
    assertBadForm(await rawUpload('post', body))
  }
  // A complete file part followed by a second, cut-off one.
  const afterFile = Buffer.concat([Buffer.from(partHead('name="file"; filename="a.png"')), photo, Buffer.from('\r\n' + partHead('name="extra"; filename="b.bin"')), Buffer.from('cut')])
  assertBadForm(await rawUpload('post', afterFile))
  assert.equal(filesOnDisk(server.dataDir), files, 'nothing was stored')
  await stillServing()
})

test('a form cut off inside the file part is 400, not 500', async () => {
  const files = filesOnDisk(server.dataDir)
  const body = Buffer.concat([Buffer.from(partHead('name="file"; filename="a.png"')), photo.subarray(0, photo.length >> 1)])
  for (const route of ['post', 'story']) assertBadForm(await rawUpload(route, body))
  assert.equal(filesOnDisk(server.dataDir), files)
  await stillServing()
})

test('malformed part headers and a body that is not multipart at all are 400', async () => {
  assertBadForm(await rawUpload('post', Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"\r\nno header end`)))
  assertBadForm(await rawUpload('post', Buffer.from('just some bytes, no boundary anywhere')))
  await stillServing()
})

test('a client that sends half the declared body and goes away gets no crash and leaves nothing behind', async () => {
  const files = filesOnDisk(server.dataDir)
  for (const disposition of ['name="file"; filename="a.png"', 'name="other"; filename="b.bin"']) {
    const half = Buffer.concat([Buffer.from(partHead(disposition)), photo.subarray(0, photo.length >> 1)])
    const answer = await rawUpload('post', half, half.length * 4)
    // The server may still answer the half-closed socket, but only ever with a client error.
    assert.ok(answer.status === 0 || (answer.status >= 400 && answer.status < 500), `status ${answer.status}`)
  }
  assert.equal(filesOnDisk(server.dataDir), files)
  await stillServing()
})

test.run()
