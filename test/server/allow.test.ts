/**
 * 405s and 404s, over the route tables: a path's `Allow` lists exactly the methods its routes serve
 * (a route whose parameter cannot be that segment is not one of them: `/posts/feed` is not a post),
 * every other method is a 405 with that `Allow`, and a path under a known prefix that no route
 * serves is a 404.
 */
import http from 'node:http'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { z } from 'zod'
import { allowOf, type Route } from '../../src/server/rest/adapter.js'
import { objectFields } from '../../src/server/rest/input-fields.js'
import { mobileRoutes } from '../../src/server/rest/mobile.js'
import { rootRoutes, utilityRoutes } from '../../src/server/rest/utility.js'
import { registerUser, startTestServer, type TestServer } from '../helpers/server.js'

let server: TestServer
test.before(async () => {
  server = await startTestServer()
})
test.after(async () => {
  await server.close()
})

/**
 * node:http rather than fetch, which refuses methods such as TRACE. The message is read from the
 * envelope, or from OpenAI's `{error}` under the OpenAI-compatible paths (`openai` says which).
 */
function send(method: string, path: string, token?: string): Promise<{ status: number; allow: string | undefined; body: { status?: string; message?: string }; openai: boolean }> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'content-length': 2, ...(token && { authorization: `Bearer ${token}` }) }
    const req = http.request(`${server.url}${path}`, { method, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => {
        let body: { status?: string; message?: string; error?: { message?: string } } = {}
        try {
          body = JSON.parse(text)
        } catch {}
        const openai = typeof body.error?.message === 'string'
        resolve({ status: res.statusCode!, allow: res.headers.allow, body: openai ? { message: body.error!.message } : body, openai })
      })
    })
    req.on('error', reject)
    req.end('{}')
  })
}

const MOUNTS: Array<[prefix: string, routes: Route[]]> = [
  ['/api/mobile', mobileRoutes],
  ['/api', utilityRoutes],
  ['', rootRoutes],
]

/** A value route `route` takes for its parameter `name`: an id, or the first of an enumeration (the reference page's files). */
function sampleFor(route: Route, name: string): string {
  const field = objectFields('request' in route ? route.request : undefined)?.[name] as (z.ZodType & { unwrap?: () => { options?: string[] } }) | undefined
  return field?.unwrap?.().options?.[0] ?? '7'
}

interface Sample {
  path: string
  /** The path's shape: its fixed text, with `:` for each parameter. */
  shape: string
}

/** The paths a route serves, with sample parameters: two for an optional last parameter (with and without it). */
function samplesOf(prefix: string, route: Route): Sample[] {
  const segments = route.path.split('/').filter(Boolean)
  const optional = /^:\w+\?$/.test(segments.at(-1) ?? '')
  const variants = optional ? [segments, segments.slice(0, -1)] : [segments]
  return variants.map((parts) => ({
    path: prefix + '/' + parts.map((part) => (part.startsWith(':') ? sampleFor(route, part.replace(/^:|\?$/g, '')) : part)).join('/'),
    shape: prefix + '/' + parts.map((part) => (part.startsWith(':') ? ':' : part)).join('/'),
  }))
}

/** Every sample path with the methods of the routes of its shape, in table order. */
function expectations(): Map<string, { shape: string; methods: string[] }> {
  const byShape = new Map<string, string[]>()
  const samples: Sample[] = []
  for (const [prefix, routes] of MOUNTS) {
    for (const route of routes) {
      for (const sample of samplesOf(prefix, route)) {
        samples.push(sample)
        const methods = byShape.get(sample.shape) ?? []
        if (!methods.includes(route.method)) methods.push(route.method)
        byShape.set(sample.shape, methods)
      }
    }
  }
  return new Map(samples.map((sample) => [sample.path, { shape: sample.shape, methods: byShape.get(sample.shape)! }]))
}

test('every path of the route tables: other methods (unknown ones included) are 405 with Allow listing exactly the methods its routes serve; those are not', async () => {
  const table = expectations()
  assert.ok(table.size > 100, `${table.size} paths`)
  for (const [path, { methods }] of table) {
    const allow = allowOf(methods)
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'TRACE', 'HEAD']) {
      if (allow.split(', ').includes(method)) continue
      const res = await send(method, path)
      assert.is(res.status, 405, `${method} ${path}`)
      assert.is(res.allow, allow, `${method} ${path}`)
      // An answer to HEAD has no body to read the message from.
      if (method !== 'HEAD') assert.is(res.body.message, `Method ${method} is not allowed here; use ${allow}`)
      // In OpenAI's shape under the OpenAI-compatible paths, as every error there is (OpenAI's clients read it).
      if (method !== 'HEAD') assert.is(res.openai, /^\/api\/(v1|inference)\//.test(path), `${method} ${path}: the error's shape`)
    }
    for (const method of methods) {
      // The route answers (a 400 for the empty body, 401 without a token, 404 for no user 7, ...), never "no such path" or "not this method".
      const res = await send(method, path)
      assert.ok(res.status !== 405 && !res.body.message?.startsWith('Not found:'), `${method} ${path}: ${res.status} ${res.body.message}`)
      // HEAD answers as GET does, without the body.
      if (method === 'GET') assert.is((await send('HEAD', path)).status, res.status, `HEAD ${path}`)
    }
  }
})

test("the issue's cases: POST /posts/feed allows GET (and HEAD) only; a post's path allows DELETE and PUT; both comment routes share their path", async () => {
  const feed = await send('POST', '/api/mobile/posts/feed')
  assert.is(feed.status, 405)
  assert.is(feed.allow, 'GET, HEAD')
  assert.is(feed.body.message, 'Method POST is not allowed here; use GET, HEAD')
  for (const method of ['DELETE', 'PUT']) assert.is((await send(method, '/api/mobile/posts/feed')).allow, 'GET, HEAD')
  assert.is((await send('GET', '/api/mobile/posts/12')).allow, 'DELETE, PUT')
  assert.is((await send('GET', '/api/mobile/interactions/comment/12')).allow, 'POST, DELETE')
})

test('a path under a known prefix that no route serves is a 404, whatever the method', async () => {
  for (const path of [
    '/api/mobile/posts/nope',
    '/api/mobile/posts/feed/extra',
    '/api/mobile/user',
    '/api/mobile/user/nope',
    '/api/mobile/interactions/comment',
    '/api/mobile/stories/feed/7',
    '/api/mobile/notifications/mark_read/nope',
    '/api/v1/nope',
    '/api/nope',
    '/docs/nope.js',
    '/nope',
  ]) {
    for (const method of ['GET', 'POST', 'PATCH', 'TRACE']) {
      const res = await send(method, path)
      assert.is(res.status, 404, `${method} ${path}`)
      assert.is(res.allow, undefined, `${method} ${path}`)
      assert.match(res.body.message!, /^Not found: /, `${method} ${path}`)
    }
  }
})

test("a path shaped like a route's, for its method, but with a parameter it cannot take reaches it: its validation names the parameter", async () => {
  const { token } = await registerUser(server)
  const res = await send('DELETE', '/api/mobile/posts/nope', token)
  assert.is(res.status, 400)
  assert.match(res.body.message!, /post_id must be a number/)
})

test('/health, /trpc, /uploads and / list their methods too', async () => {
  for (const [method, path, allow] of [
    ['POST', '/health', 'GET, HEAD'],
    ['TRACE', '/health', 'GET, HEAD'],
    ['PUT', '/trpc/auth.login', 'GET, POST'],
    ['TRACE', '/trpc/auth.login', 'GET, POST'],
    ['POST', '/uploads/posts/x.jpg', 'GET, HEAD'],
    ['DELETE', '/', 'GET, HEAD'],
  ]) {
    const res = await send(method, path)
    assert.is(res.status, 405, `${method} ${path}`)
    assert.is(res.allow, allow, `${method} ${path}`)
  }
  assert.is((await send('HEAD', '/health')).status, 200)
})

test.run()
