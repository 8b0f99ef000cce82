/**
 * The object-storage commands and start-up checks, through the built `plaza` binary:
 * `plaza admin storage migrate` copies a data directory's files into the bucket (then a server on
 * that bucket serves them), runs again without copying twice, and a bad configuration stops
 * `plaza serve` and the migration with one clear line and exit 2.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runCli, startServe } from '../helpers/cli.js'
import { shell, writePng } from '../cli/cli.js'
import { registerUser, startTestServer, tempDir } from '../helpers/server.js'
import { solidImage, upload } from '../uploads/fixtures.js'
import { startFakeS3, type FakeS3 } from './fake-s3.js'

let s3: FakeS3
const dataDir = tempDir('plaza-migrate-')
const stored: string[] = []

test.before(async () => {
  s3 = await startFakeS3()
  // A data directory with real uploads, made by a server on the local disk.
  const local = await startTestServer({ dataDir })
  try {
    const user = await registerUser(local)
    for (const [width, height] of [[30, 20], [20, 30], [16, 16]]) {
      const res = await upload(local, 'post', user.token, await solidImage(width, height, 'jpeg'))
      assert.is(res.status, 201)
      stored.push(res.body.data.path)
    }
  } finally {
    await local.close()
  }
  // Not a storage key: left behind.
  writeFileSync(path.join(dataDir, 'uploads', 'posts', 'notes.txt'), 'not an upload')
})
test.after(async () => {
  await s3.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/** oclif wraps errors to the terminal's width; a wide one shows whether a message is one line. */
const WIDE = { OCLIF_COLUMNS: '1000' }

const migrate = (args: string[], env: NodeJS.ProcessEnv = s3.env()) =>
  runCli(['admin', 'storage', 'migrate', '--data-dir', dataDir, ...args], { env: { ...WIDE, ...env } })

test('migrate copies every file to the bucket under the prefix, reports counts, and a second run copies nothing', async () => {
  const first = await migrate(['--to', `s3://${s3.bucket}/moved/here`, '--json'])
  assert.is(first.code, 0, first.stderr)
  const report = JSON.parse(first.stdout)
  assert.equal({ ...report, bytes: undefined }, { to: `s3://${s3.bucket}/moved/here`, copied: 3, skipped: 0, bytes: undefined, failed: [] })
  assert.ok(report.bytes > 0)
  for (const key of stored) assert.ok(s3.objects.has(`moved/here/${key}`), `${key} was copied`)
  assert.is([...s3.objects.keys()].filter((key) => key.startsWith('moved/here/') && !key.includes('.staging')).length, 3)

  const again = await migrate(['--to', `s3://${s3.bucket}/moved/here`])
  assert.is(again.code, 0, again.stderr)
  assert.match(again.stdout, /^copied 0 files \(0 bytes\) from .+ to s3:\/\/plaza-test\/moved\/here; 3 already there; 0 failed\n$/)

  // A server on the bucket serves the migrated files from it.
  const server = await startTestServer({ dataDir, env: s3.env('moved/here') })
  try {
    const res = await server.request('GET', '/' + stored[0])
    assert.is(res.status, 200)
    const meta = await sharp(res.body).metadata()
    assert.equal([meta.width, meta.height], [30, 20])
  } finally {
    await server.close()
  }
})

test('migrate: a bad --to, missing credentials or a wrong secret are one line and exit 2, copying nothing', async () => {
  const before = s3.objects.size
  const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
    [['--to', 'https://example.com/bucket'], s3.env(), /^Error: --to must be an s3:\/\/bucket\/prefix URL/],
    [['--to', 's3://Bad_Bucket/x'], s3.env(), /"Bad_Bucket" is not a bucket name/],
    [['--to', 's3://plaza-test/../up'], s3.env(), /the prefix "\.\.\/up" may hold only/],
    [['--to', 's3://plaza-test/x'], { ...s3.env(), PLAZA_S3_SECRET_ACCESS_KEY: '' }, /--to is an S3 bucket, so PLAZA_S3_SECRET_ACCESS_KEY must be set too/],
    [['--to', 's3://plaza-test/x'], { ...s3.env(), PLAZA_S3_SECRET_ACCESS_KEY: 'wrong-secret-value' }, /cannot be used: SignatureDoesNotMatch/],
    [['--to', 's3://no-such-bucket/x'], s3.env(), /cannot be used: NoSuchBucket/],
  ]
  for (const [args, env, message] of cases) {
    const result = await migrate(args, env)
    assert.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`)
    assert.match(result.stderr, message)
    assert.not.match(result.stderr, /wrong-secret-value|\n\s+at /, 'no secret, no stack trace')
    assert.is(result.stderr.trim().split('\n').length, 1, result.stderr)
  }
  assert.is(s3.objects.size, before)
})

test('plaza serve with two workers on the bucket: an upload lands in it and is served from it, no file on disk', async () => {
  const serveDir = tempDir('plaza-serve-')
  const { child, url, exited } = await startServe(['--port', '0', '--data-dir', serveDir, '--workers', '2', '--no-rate-limits'], s3.env('workers'))
  try {
    const register = await fetch(`${url}/api/mobile/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'bucketuser', email: 'bucketuser@example.com', password: 'correct horse' }),
    })
    const token = ((await register.json()) as any).data.token as string
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(await solidImage(24, 12, 'png'))], { type: 'image/png' }), 'a.png')
    const uploaded = await fetch(`${url}/api/mobile/upload/post`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form })
    assert.is(uploaded.status, 201)
    const stored = ((await uploaded.json()) as any).data.path as string
    assert.ok(s3.objects.has(`workers/${stored}`))
    for (let i = 0; i < 4; i++) {
      // Connections are handed to the workers in turn: each serves it from the bucket.
      const served = await fetch(`${url}/${stored}`, { headers: { connection: 'close' } })
      assert.is(served.status, 200)
      assert.equal((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).width, 24)
    }
    assert.not.ok(existsSync(path.join(serveDir, 'uploads')))
  } finally {
    child.kill('SIGTERM')
    assert.is(await exited, 0)
    rmSync(serveDir, { recursive: true, force: true })
  }
})

test('an embedded CLI command on a data directory stores its upload in the bucket too', async () => {
  const embeddedDir = tempDir('plaza-embedded-')
  const cli = shell({ dataDir: embeddedDir }, s3.env('embedded'))
  try {
    const registered = await cli.run(['social', 'register', '-u', 'embeddy', '-e', 'embeddy@example.com', '--password-stdin'], { input: 'correct horse battery' })
    assert.is(registered.code, 0, registered.stderr)
    const uploaded = await cli.run(['social', 'upload', 'post', await writePng(embeddedDir), '--json'])
    assert.is(uploaded.code, 0, uploaded.stderr)
    const stored = JSON.parse(uploaded.stdout).path as string
    assert.ok(s3.objects.has(`embedded/${stored}`))
    assert.not.ok(existsSync(path.join(embeddedDir, stored)))
  } finally {
    rmSync(embeddedDir, { recursive: true, force: true })
    rmSync(cli.configHome, { recursive: true, force: true })
  }
})

test('plaza serve refuses a bad storage configuration at start-up with one line and exit 2', async () => {
  const serveDir = tempDir('plaza-serve-')
  try {
    const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
      [{ PLAZA_STORAGE_URL: 'gs://bucket/x' }, /PLAZA_STORAGE_URL must be s3:\/\/bucket\/prefix/],
      [{ PLAZA_STORAGE_URL: 's3://plaza-test/media' }, /PLAZA_STORAGE_URL is an S3 bucket, so PLAZA_S3_ACCESS_KEY_ID and PLAZA_S3_SECRET_ACCESS_KEY must be set too/],
      [{ ...s3.env(), PLAZA_S3_ENDPOINT: 'ftp://127.0.0.1' }, /PLAZA_S3_ENDPOINT must be an http\(s\) URL/],
      [{ ...s3.env(), PLAZA_STORAGE_SERVE: 'cdn' }, /PLAZA_STORAGE_SERVE must be proxy or redirect/],
      [{ PLAZA_STORAGE_SERVE: 'redirect' }, /PLAZA_STORAGE_SERVE=redirect needs an object store/],
      [{ ...s3.env(), PLAZA_S3_ACCESS_KEY_ID: 'SOMEONEELSE' }, /object storage s3:\/\/plaza-test\/plaza cannot be used: InvalidAccessKeyId/],
    ]
    for (const [env, message] of cases) {
      const result = await runCli(['serve', '--port', '0', '--data-dir', serveDir], { env: { ...WIDE, ...env } })
      assert.is(result.code, 2, `${JSON.stringify(env)}: ${result.stderr}`)
      assert.match(result.stderr, message)
      assert.is(result.stderr.trim().split('\n').length, 1, result.stderr)
      assert.not.match(result.stderr, new RegExp(s3.secretAccessKey))
    }
  } finally {
    rmSync(serveDir, { recursive: true, force: true })
  }
})

test.run()
