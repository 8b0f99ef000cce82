/** `plaza serve --workers N`: N processes on one port sharing the database; SIGTERM drains them all. */
import { readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startServe } from '../helpers/cli.js'
import { parsePrometheusText, sampleValue } from '../helpers/prometheus.js'
import { tempDir } from '../helpers/server.js'

/** The pids whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // The command name in (…) may hold spaces; the parent pid is the second field after it.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) children.push(Number(entry))
    } catch {}
  }
  return children
}

/** Starts a request, sends half its body and resolves the answer once the rest is sent by `finish()`. */
function halfSent(url: string, body: string) {
  let finish!: () => void
  const answer = new Promise<number>((resolve, reject) => {
    const req = http.request(`${url}/api/mobile/auth/register`, { method: 'POST', headers: { 'content-length': Buffer.byteLength(body), 'content-type': 'application/json' }, agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode!))
    })
    req.on('error', reject)
    req.write(body.slice(0, 10))
    finish = () => req.end(body.slice(10))
  })
  return { answer, finish: () => finish() }
}

/** Scrapes (each on a fresh connection) until `count` requests besides the scrape itself are in flight across the workers. */
async function untilInFlight(url: string, count: number) {
  for (let i = 0; i < 500; i++) {
    const families = parsePrometheusText(await (await fetch(`${url}/metrics`, { headers: { connection: 'close' } })).text())
    if (sampleValue(families, 'plaza_http_requests_in_flight') === count + 1) return
  }
  throw new Error(`${count} requests never were in flight together`)
}

/**
 * Resolves once the port refuses connections: every worker has stopped listening, and the cluster's
 * primary has closed the socket. A bare TCP connect, dropped at once: an HTTP request could be
 * handed to a worker that is closing and wait there.
 */
async function untilRefused(url: string) {
  const { hostname, port } = new URL(url)
  for (let i = 0; i < 1000; i++) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(Number(port), hostname)
      socket.once('connect', () => {
        socket.destroy()
        resolve(false)
      })
      socket.once('error', () => resolve(true))
    })
    if (refused) return
  }
  throw new Error('the port kept accepting connections')
}

const account = (name: string) => JSON.stringify({ username: name, email: `${name}@example.com`, password: 'password1' })

test('--workers 2 runs two server processes on one port; SIGTERM lets in-flight requests on both finish, then all exit 0', async () => {
  const { child, url, exited, output } = await startServe(['--port', '0', '--data-dir', tempDir(), '--workers', '2', '--no-rate-limits'])
  assert.match(output(), /listening on http:\/\/127\.0\.0\.1:\d+ \(2 workers\)/)
  const workers = childrenOf(child.pid!)
  assert.is(workers.length, 2)
  // Round-robin hands successive connections to alternate workers: two requests in flight span both.
  const first = halfSent(url, account('drain_one'))
  const second = halfSent(url, account('drain_two'))
  await untilInFlight(url, 2)
  child.kill('SIGTERM')
  await untilRefused(url)
  first.finish()
  second.finish()
  assert.equal(await Promise.all([first.answer, second.answer]), [201, 201])
  assert.is(await exited, 0)
  for (const pid of workers) assert.not.ok(readdirSync('/proc').includes(String(pid)), `worker ${pid} is gone`)
})

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`${signal} to the whole process group (a terminal's Ctrl+C, systemd's stop) lets in-flight requests on every worker finish, then all exit 0`, async () => {
    const { child, url, exited } = await startServe(['--port', '0', '--data-dir', tempDir(), '--workers', '2', '--no-rate-limits'], {}, { detached: true })
    const workers = childrenOf(child.pid!)
    const first = halfSent(url, account(`group_${signal}_1`))
    const second = halfSent(url, account(`group_${signal}_2`))
    await untilInFlight(url, 2)
    // Every process of the group gets the signal: the primary, which orders its workers to drain, and each worker.
    process.kill(-child.pid!, signal)
    await untilRefused(url)
    first.finish()
    second.finish()
    assert.equal(await Promise.all([first.answer, second.answer]), [201, 201])
    assert.is(await exited, 0)
    for (const pid of workers) assert.not.ok(readdirSync('/proc').includes(String(pid)), `worker ${pid} is gone`)
  })
}

test('a second Ctrl+C forces: the server exits 1 at once, cutting what was in flight', async () => {
  const { child, url, exited } = await startServe(['--port', '0', '--data-dir', tempDir(), '--workers', '2', '--no-rate-limits'], {}, { detached: true })
  const pending = halfSent(url, account('forced'))
  const cut = pending.answer.then(
    () => 'answered',
    () => 'cut',
  )
  await untilInFlight(url, 1)
  process.kill(-child.pid!, 'SIGINT')
  await untilRefused(url)
  process.kill(-child.pid!, 'SIGINT')
  assert.is(await exited, 1)
  assert.is(await cut, 'cut')
})

test('SIGTERM stops the server within the grace for heavy work whatever its pools are doing: every request answered, no sandbox left behind', async () => {
  const hour = '3600000'
  const { child, url, exited } = await startServe(['--port', '0', '--data-dir', tempDir(), '--workers', '1', '--no-rate-limits'], {
    PLAZA_EXECUTE_JS_TIMEOUT_MS: hour,
    PLAZA_EXECUTE_PYTHON_TIMEOUT_MS: hour,
    PLAZA_EXECUTE_PYTHON_WARM: '1',
    // The grace the stop gives them: a second (5 s by default), which the spinning programs use up.
    PLAZA_STOP_GRACE: '1',
  })
  const post = (path: string, body: unknown) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      (res) => res.status,
      (error: Error) => error.message,
    )
  // Programs that never end, in a pool's worker thread and in a process, each with an hour's budget, and a run queued behind them.
  const answers = [
    post('/api/execute', { language: 'javascript', code: 'while (true) {}' }),
    post('/api/execute', { language: 'python', code: 'while True: pass' }),
    post('/api/execute', { language: 'javascript', code: 'console.log(1)' }),
  ]
  await untilInFlight(url, answers.length)
  const sandboxes = childrenOf(child.pid!)
  child.kill('SIGTERM')
  // Far less than the jobs' own hour: the stop gives heavy work a few seconds.
  const stopped = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running after 300 s'), 300_000).unref())])
  assert.is(stopped, 0)
  const statuses = await Promise.all(answers)
  for (const status of statuses) assert.ok(typeof status === 'number' && (status === 503 || status === 200), `answered ${status}`)
  for (const pid of sandboxes) assert.not.ok(readdirSync('/proc').includes(String(pid)), `process ${pid} outlived the server`)
})

test('a worker that dies is replaced, and the port keeps serving', async () => {
  const { child, url, exited } = await startServe(['--port', '0', '--data-dir', tempDir(), '--workers', '2'])
  const [victim] = childrenOf(child.pid!)
  process.kill(victim, 'SIGKILL')
  let replaced: number[] = []
  for (let i = 0; i < 100 && !(replaced.length === 2 && !replaced.includes(victim)); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    replaced = childrenOf(child.pid!)
  }
  assert.is(replaced.length, 2)
  assert.not.ok(replaced.includes(victim))
  for (let i = 0; i < 4; i++) assert.is((await fetch(`${url}/health`)).status, 200)
  child.kill('SIGTERM')
  assert.is(await exited, 0)
})

test('workers share one rate limit: the 6th login a minute from one address is refused whichever worker answers', async () => {
  const { child, url, exited } = await startServe(['--port', '0', '--data-dir', tempDir(), '--workers', '2'])
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) {
    const res = await fetch(`${url}/api/mobile/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ email: 'nobody@example.com', password: 'password1' }) })
    statuses.push(res.status)
  }
  assert.equal(statuses, [401, 401, 401, 401, 401, 429])
  child.kill('SIGTERM')
  assert.is(await exited, 0)
})

test.run()
