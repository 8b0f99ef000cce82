import http from 'node:http'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runCli, startServe } from '../helpers/cli.js'
import { tempDir } from '../helpers/server.js'

test('plaza serve prints its address, serves the API and creates the data directory', async () => {
  const dataDir = path.join(tempDir(), 'data')
  const { child, url, exited } = await startServe(['--port', '0', '--data-dir', dataDir])
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
  const health = await fetch(`${url}/health`)
  assert.is(health.status, 200)
  assert.ok(existsSync(path.join(dataDir, 'plaza.db')))
  child.kill('SIGINT')
  assert.is(await exited, 0)
})

test('plaza serve reads PLAZA_PORT, PLAZA_HOST and PLAZA_DATA_DIR', async () => {
  const dataDir = path.join(tempDir(), 'from-env')
  const { child, url, exited } = await startServe([], { PLAZA_PORT: '0', PLAZA_HOST: '127.0.0.1', PLAZA_DATA_DIR: dataDir })
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
  assert.ok(existsSync(path.join(dataDir, 'plaza.db')))
  child.kill('SIGTERM')
  assert.is(await exited, 0)
})

test('on SIGTERM an in-flight request finishes before the server exits 0', async () => {
  const { child, url, exited } = await startServe(['--port', '0', '--data-dir', tempDir()])
  const body = JSON.stringify({ username: 'inflight', email: 'inflight@example.com', password: 'password1' })
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(`${url}/api/mobile/auth/register`, { method: 'POST', headers: { 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode!, text }))
    })
    req.on('error', reject)
    // Send half the body, signal the server, then finish: the request is in flight across the signal.
    req.write(body.slice(0, 10), () => {
      child.kill('SIGTERM')
      setImmediate(() => req.end(body.slice(10)))
    })
  })
  const { status, text } = await answer
  assert.is(status, 201, text)
  assert.is(await exited, 0)
})

test('plaza serve refuses a bad port with a usage error', async () => {
  const result = await runCli(['serve', '--port', '70000'])
  assert.is(result.code, 2)
  assert.match(result.stderr, /port/i)
  const env = await runCli(['serve'], { env: { PLAZA_PORT: 'abc', PLAZA_DATA_DIR: tempDir() } })
  assert.is(env.code, 2)
  assert.match(env.stderr, /port/)
  assert.not.match(env.stderr, /at .*\.js:\d+/)
})

test.run()
