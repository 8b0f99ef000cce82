/**
 * The catalog registry's own rules: each operation once, well-formed paths and summaries, a
 * handler and an input schema for what is offered, and route tables that are exactly its offered rows.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { catalog, isOffered } from '../../src/server/catalog/registry.js'
import { rootRoutes, utilityRoutes } from '../../src/server/rest/utility.js'
import { CATALOG_BACKENDS, CATALOG_GROUPS } from '../../src/shared/schemas/catalog.js'
import { ROOT } from '../helpers/cli.js'

/**
 * Offered GET operations that read no query parameter and so need no input schema. A new row that
 * takes none is added here on purpose; every other offered row must declare what it validates.
 */
const TAKES_NO_INPUT = new Set([
  'GET /api/openapi.json',
  'GET /docs',
  'GET /api/uptime',
  'GET /api/imageFx/effects',
  'GET /api/tts/flite/voices',
  'GET /api/tts/espeak/voices',
  'GET /api/website',
  'GET /api/metrics',
  'GET /metrics',
  'GET /api/stats',
  'GET /api/v1/models',
  'GET /api/chat/providers',
  'GET /api/chat/models',
  'GET /api/meme/templates',
])

const key = (method: string | null, route: string | null) => `${method} ${route}`

test('each method and path once', () => {
  const seen = new Set<string>()
  for (const row of catalog.filter((r) => r.path !== null)) {
    const id = key(row.method, row.path)
    assert.not.ok(seen.has(id), `${id} is listed twice`)
    seen.add(id)
  }
})

test('every row: a known group and backend, a one-line summary, an absolute path (or none, with the reason why)', () => {
  for (const row of catalog) {
    const id = key(row.method, row.path)
    assert.ok((CATALOG_GROUPS as readonly string[]).includes(row.group), `${id}: group ${row.group}`)
    assert.ok((CATALOG_BACKENDS as readonly string[]).includes(row.backend), `${id}: backend ${row.backend}`)
    assert.ok(row.summary.trim().length > 0 && !row.summary.includes('\n'), `${id}: a one-line summary`)
    assert.is(row.method === null, row.path === null, `${id}: method and path go together`)
    assert.is(row.path === null, row.notOffered !== undefined, `${id}: a row without a path is one never offered, and says why`)
    if (row.notOffered !== undefined) assert.is(row.handle, undefined, `${id}: never offered, yet has a handler`)
    if (row.path === null) continue
    // Segments are names or `:param`; only the last may be optional (`:param?`).
    assert.match(row.path, /^(\/(:?[A-Za-z0-9._~-]+))*(\/:[A-Za-z0-9_]+\??)?$/, `${id}: an absolute path without trailing slash, spaces or empty segments`)
    assert.ok(row.path.length > 1, `${id}: not the root itself`)
    // Mounted before the catalog, these would shadow a catalog row for ever.
    assert.not.match(row.path, /^\/(api\/mobile|trpc|health|uploads)(\/|$)/, `${id}: under a path served before the catalog`)
  }
})

test('provider names and docs links are real', () => {
  for (const row of catalog) {
    const id = key(row.method, row.path)
    if (row.backend === 'provider' && row.path !== null) assert.ok(row.providers?.length, `${id}: a provider row names its provider(s)`)
    for (const name of row.providers ?? []) assert.match(name, /^[A-Z][A-Z0-9_]*$/, `${id}: PLAZA_${name}_BASE_URL is a variable name`)
    if (row.docs) assert.ok(existsSync(path.join(ROOT, row.docs.split('#')[0])), `${id}: ${row.docs} exists`)
  }
})

test("each group's rows are together (the list and the README show them in blocks)", () => {
  const order = catalog.map((row) => row.group).filter((group, i, all) => i === 0 || all[i - 1] !== group)
  assert.equal(order, [...new Set(order)])
})

test('offered rows have a handler, and an input schema unless they take no input', () => {
  const offered = catalog.filter(isOffered)
  assert.ok(offered.length > 0)
  for (const row of offered) {
    const id = key(row.method, row.path)
    assert.type(row.handle, 'function', id)
    if (!TAKES_NO_INPUT.has(id)) assert.ok(row.input, `${id} takes input: give its row an input schema (or add it to TAKES_NO_INPUT)`)
    if (row.method === 'POST') assert.ok(row.input, `${id}: a POST validates a body`)
  }
})

test('the route tables are exactly the offered rows: /api ones at /api, the others at the root', () => {
  const offered = catalog.filter(isOffered)
  const mounted = [...utilityRoutes.map((route) => key(route.method, '/api' + route.path)), ...rootRoutes.map((route) => key(route.method, route.path))]
  assert.equal(mounted.sort(), offered.map((row) => key(row.method, row.path)).sort())
  for (const route of rootRoutes) assert.not.ok(route.path.startsWith('/api/'), route.path)
  // A root route is its row's path; a /api one has it without the prefix (`/metrics` and `/api/metrics` are two rows).
  for (const [mount, routes] of [['', rootRoutes], ['/api', utilityRoutes]] as const) {
    for (const route of routes) {
      const row = offered.find((r) => r.method === route.method && r.path === mount + route.path)!
      assert.ok('handle' in route && route.handle === row.handle, `${key(route.method, route.path)} is served by its row's handler`)
    }
  }
})

test.run()
