/** `GET /api/list` through the real server: every registry row, its offered and configured flags, and the filters. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { catalog } from '../../src/server/catalog/registry.js'
import { catalogListAnswer, type CatalogEntry } from '../../src/shared/schemas/catalog.js'
import { startFakeUpstream } from '../chat/fake-upstream.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

const KEY = 'sk-live-SECRET-list-7731'

async function list(server: TestServer, query = ''): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${server.url}/api/list${query}`)
  const text = await response.text()
  return { status: response.status, body: JSON.parse(text), text }
}

const find = (operations: CatalogEntry[], method: string, path: string) => {
  const found = operations.find((entry) => entry.method === method && entry.path === path)
  if (!found) throw new Error(`${method} ${path} is not listed`)
  return found
}

test('lists every registry row in registry order, with what is offered, what is not and why', async () => {
  const server = await startTestServer({ env: {} })
  try {
    const { status, body } = await list(server)
    assert.is(status, 200)
    // The answer has the shape its schema declares, and nothing more (parsing drops unknown keys).
    assert.equal(catalogListAnswer.parse(body), body)
    const operations: CatalogEntry[] = body.operations
    assert.equal(
      operations.map((entry) => [entry.group, entry.method, entry.path, entry.summary, entry.backend]),
      catalog.map((row) => [row.group, row.method, row.path, row.summary, row.backend]),
    )
    const offered = operations.filter((entry) => entry.offered).length
    assert.ok(offered >= 3)
    assert.is(body.message, `${operations.length} operations, ${offered} offered`)

    const self = find(operations, 'GET', '/api/list')
    assert.equal(self, { group: 'system', method: 'GET', path: '/api/list', summary: self.summary, offered: true, backend: 'local', configured: true })
    assert.is(find(operations, 'GET', '/api/uptime').offered, true)
    assert.is(find(operations, 'POST', '/api/codeimage').offered, true)
    // Rows without a handler yet, and the two that are never offered with their reason.
    // (Which rows those are changes as operations land: every one the registry has is checked.)
    for (const row of catalog.filter((row) => row.path !== null && !row.handle)) {
      const entry = find(operations, row.method!, row.path!)
      assert.equal([entry.offered, entry.reason], [false, 'not built yet'], `${row.method} ${row.path}`)
    }
    const never = operations.filter((entry) => entry.path === null)
    assert.equal(never.map((entry) => entry.group).sort(), ['Image Processing', 'NSFW'])
    for (const entry of never) {
      assert.is(entry.offered, false)
      assert.is(entry.method, null)
      assert.is(entry.reason, catalog.find((row) => row.summary === entry.summary)!.notOffered)
    }
    for (const entry of operations) assert.is('reason' in entry, !entry.offered, `${entry.path}: a reason exactly when not offered`)
  } finally {
    await server.close()
  }
})

test('configured: local always; providers by PLAZA_<NAME>_BASE_URL (Open-Meteo by default); gateway rows by the gateway', async () => {
  const bare = await startTestServer({ env: {} })
  try {
    const { operations } = (await list(bare)).body as { operations: CatalogEntry[] }
    for (const entry of operations.filter((e) => e.backend === 'local')) assert.is(entry.configured, true, `${entry.path} is local`)
    assert.is(find(operations, 'GET', '/api/weather').configured, true)
    assert.is(find(operations, 'GET', '/api/imagine').configured, false)
    assert.is(find(operations, 'GET', '/api/removebg').configured, false)
    assert.is(find(operations, 'POST', '/api/chaty').configured, false)
    assert.is(find(operations, 'POST', '/api/v1/chat/completions').configured, false)
    assert.is(find(operations, 'POST', '/api/inference/chat/completions').configured, false)
  } finally {
    await bare.close()
  }

  const upstream = await startFakeUpstream()
  const server = await startTestServer({
    env: { PLAZA_LLM_BASE_URL: `${upstream.url}/v1`, PLAZA_LLM_API_KEY: KEY, PLAZA_IMAGES_BASE_URL: `${upstream.url}/images`, PLAZA_IMAGES_API_KEY: KEY, PLAZA_REMOVEBG_BASE_URL: '  ' },
  })
  try {
    const { body, text } = await list(server)
    const operations: CatalogEntry[] = body.operations
    // Every row that names IMAGES, and nothing else of the provider rows.
    for (const row of catalog.filter((r) => r.backend === 'provider' && r.path)) {
      const expected = row.providers!.some((name) => name === 'IMAGES' || name === 'WEATHER' || name === 'GEOCODING')
      assert.is(find(operations, row.method!, row.path!).configured, expected, `${row.method} ${row.path}`)
    }
    for (const path of ['/api/chaty', '/api/reasoning-70b', '/api/copilot', '/api/v1/chat/completions']) assert.is(find(operations, 'POST', path).configured, true, path)
    // A gateway row with a provider of its own needs that one: INFERENCE is not set.
    assert.is(find(operations, 'POST', '/api/inference/chat/completions').configured, false)
    assert.not.ok(text.includes(KEY), 'no key in the answer')
    assert.not.ok(text.includes(upstream.url), 'no upstream address in the answer')
    // The fake upstream was never called: listing only reads the configuration.
    assert.is(upstream.requests.length, 0)
  } finally {
    await server.close()
    await upstream.close()
  }

  const inference = await startTestServer({ env: { PLAZA_INFERENCE_BASE_URL: 'http://127.0.0.1:9/v1' } })
  try {
    const { operations } = (await list(inference)).body as { operations: CatalogEntry[] }
    assert.is(find(operations, 'POST', '/api/inference/chat/completions').configured, true)
    assert.is(find(operations, 'POST', '/api/chaty').configured, false)
  } finally {
    await inference.close()
  }
})

test('filters: ?group= in any letter case and ?offered=true|false, alone or together', async () => {
  const server = await startTestServer({ env: {} })
  try {
    const maker = (await list(server, '?group=maker')).body
    assert.equal(
      maker.operations.map((entry: CatalogEntry) => entry.path),
      catalog.filter((row) => row.group === 'Maker').map((row) => row.path),
    )
    const generators = (await list(server, '?group=image-generators')).body
    assert.ok(generators.operations.length > 0)
    assert.ok(generators.operations.every((entry: CatalogEntry) => entry.group === 'IMAGE-GENERATORS'))

    const all = (await list(server)).body.operations as CatalogEntry[]
    const offered = (await list(server, '?offered=true')).body
    assert.equal(offered.operations, all.filter((entry) => entry.offered))
    assert.is(offered.message, `${offered.operations.length} operations, ${offered.operations.length} offered`)
    const notOffered = (await list(server, '?offered=false')).body.operations as CatalogEntry[]
    assert.equal(notOffered, all.filter((entry) => !entry.offered))

    const systemOffered = (await list(server, '?group=System&offered=true')).body.operations as CatalogEntry[]
    assert.equal(systemOffered, all.filter((entry) => entry.group === 'system' && entry.offered))
    assert.ok(systemOffered.some((entry) => entry.path === '/api/uptime'))
  } finally {
    await server.close()
  }
})

test('bad filters: 400 naming the field, in the envelope', async () => {
  const server = await startTestServer({ env: {} })
  try {
    const cases: Array<[string, RegExp]> = [
      ['?group=nope', /^group must be one of: system, Tools, .*Anime$/],
      ['?group=', /^group must be one of/],
      ['?offered=yes', /^offered must be true or false$/],
      ['?offered=TRUE', /^offered must be true or false$/],
      ['?group=%E2%9C%93&offered=1', /group must be one of.*; offered must be true or false/],
    ]
    for (const [query, message] of cases) {
      const { status, body } = await list(server, query)
      assert.is(status, 400, query)
      assert.is(body.status, 'error')
      assert.is(body.data, null)
      assert.match(body.message, message)
    }
    const post = await server.request('POST', '/api/list', { body: {} })
    assert.is(post.status, 405)
    assert.is(post.headers.get('allow'), 'GET, HEAD')
  } finally {
    await server.close()
  }
})

test.run()
