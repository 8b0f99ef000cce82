/** `plaza util list`, embedded and against a server (the built CLI: `npm run build` first; `npm test` does it). */
import net from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { catalog } from '../../src/server/catalog/registry.js'
import type { CatalogEntry, CatalogListAnswer } from '../../src/shared/schemas/catalog.js'
import { runCli } from '../helpers/cli.js'
import { startTestServer } from '../helpers/server.js'

/** A port nothing listens on: one the system just handed out and took back. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

const find = (operations: CatalogEntry[], method: string, path: string) => operations.find((entry) => entry.method === method && entry.path === path)!

test('embedded: a table grouped by group, with offered and configured marks and why a row is not offered', async () => {
  const run = await runCli(['util', 'list'])
  assert.is(run.code, 0, run.stderr)
  const lines = run.stdout.trimEnd().split('\n')
  assert.match(lines[0], /^ {2}OFFERED {2}CONFIGURED {2}METHOD {2}PATH +SUMMARY$/)
  // Every group heads its block, in registry order.
  const groups = [...new Set(catalog.map((row) => row.group))]
  assert.equal(lines.filter((line) => !line.startsWith(' ')).slice(0, -1), groups)
  assert.match(run.stdout, /\n {2}yes +yes +GET +\/api\/list +Every catalog operation/)
  // Rows not built yet (which ones changes as operations land).
  for (const row of catalog.filter((row) => row.path !== null && !row.handle)) {
    assert.ok(lines.some((line) => new RegExp(`^ {2}no +(yes|no) +${row.method} +${row.path!.replace(/[/.?]/g, '\\$&')} +.*\\(not built yet\\)$`).test(line)), `${row.method} ${row.path}`)
  }
  assert.match(run.stdout, /\n {2}yes +no +GET +\/api\/clips +Video clips matching a search text/)
  assert.match(run.stdout, /\n {2}yes +no +GET +\/api\/removebg +Remove the background of an image/)
  assert.match(run.stdout, /\n {2}yes +yes +GET +\/api\/weather +Current weather/)
  assert.match(run.stdout, /\n {2}no +no +- +- +Adult content \(not offered: Plaza does not serve adult content/)
  const offered = catalog.filter((row) => row.handle).length
  assert.is(lines.at(-1), `${catalog.length} operations, ${offered} offered`)
})

test('embedded --json: the answer GET /api/list gives, configured from this environment', async () => {
  const bare = await runCli(['util', 'list', '--json'])
  assert.is(bare.code, 0, bare.stderr)
  const answer: CatalogListAnswer = JSON.parse(bare.stdout)
  assert.equal(answer.operations.map((entry) => entry.path), catalog.map((row) => row.path))
  assert.is(find(answer.operations, 'POST', '/api/chaty').configured, false)
  assert.is(find(answer.operations, 'GET', '/api/imagine').configured, false)

  const configured = await runCli(['util', 'list', '--json', '--group', 'ai', '--offered'], {
    env: { PLAZA_LLM_BASE_URL: 'http://127.0.0.1:9/v1', PLAZA_LLM_API_KEY: 'sk-cli-SECRET', PLAZA_IMAGES_BASE_URL: 'http://127.0.0.1:9' },
  })
  assert.is(configured.code, 0, configured.stderr)
  assert.not.ok(configured.stdout.includes('sk-cli-SECRET'))
  const ai: CatalogListAnswer = JSON.parse(configured.stdout)
  assert.ok(ai.operations.length > 0)
  assert.ok(ai.operations.every((entry) => entry.group === 'AI' && entry.offered))
  assert.is(find(ai.operations, 'POST', '/api/v1/chat/completions').configured, true)

  const images = await runCli(['util', 'list', '--json', '--group', 'IMAGE-GENERATORS', '--offered'], { env: { PLAZA_IMAGES_BASE_URL: 'http://127.0.0.1:9' } })
  const generators: CatalogListAnswer = JSON.parse(images.stdout)
  assert.ok(generators.operations.length > 0)
  assert.ok(generators.operations.every((entry) => entry.group === 'IMAGE-GENERATORS' && entry.offered && entry.configured))
})

test('remote: asks the server, whose environment (not the CLI\'s) decides what is configured', async () => {
  const server = await startTestServer({ env: { PLAZA_REMOVEBG_BASE_URL: 'http://127.0.0.1:9' } })
  try {
    const run = await runCli(['util', 'list', '--url', server.url, '--json', '--group', 'image processing'], { env: { PLAZA_IMAGES_BASE_URL: 'http://127.0.0.1:9' } })
    assert.is(run.code, 0, run.stderr)
    const expected = await (await fetch(`${server.url}/api/list?group=Image%20Processing`)).json()
    assert.equal(JSON.parse(run.stdout), expected)
    assert.is(find(expected.operations, 'GET', '/api/removebg').configured, true)
    assert.is(find(expected.operations, 'GET', '/api/zombie').configured, false)

    const table = await runCli(['util', 'list', '--offered'], { env: { PLAZA_URL: server.url } })
    assert.is(table.code, 0, table.stderr)
    assert.match(table.stdout, /\nsystem\n( {2}.*\n)* {2}yes +yes +GET +\/api\/uptime/)
    assert.not.match(table.stdout, /not built yet/)
  } finally {
    await server.close()
  }
})

test('bad input: a usage error (exit 2) before anything is asked; an unreachable server is exit 1', async () => {
  const bad = await runCli(['util', 'list', '--group', 'weathr', '--url', 'http://127.0.0.1:9'])
  assert.is(bad.code, 2)
  assert.match(bad.stderr, /^Error: group must be one of: system, Tools/)
  assert.is(bad.stdout, '')
  const closed = await closedPort()
  const gone = await runCli(['util', 'list', '--url', `http://127.0.0.1:${closed}`])
  assert.is(gone.code, 1)
  assert.is(gone.stderr, `Error: cannot reach http://127.0.0.1:${closed}: ECONNREFUSED\n`)
})

test.run()
