/**
 * GET /api/openapi.json: a valid OpenAPI 3.1 document of exactly the routes the server serves,
 * generated from the route tables and the zod schemas that validate requests.
 */
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import http from 'node:http'
import { createRequire } from 'node:module'
import path from 'node:path'
import { promisify } from 'node:util'
import { Validator } from '@seriousme/openapi-schema-validator'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { z } from 'zod'
import { createSchemaCollector } from '../../src/server/catalog/system/json-schema.js'
import { DEFAULT_RATE_LIMITS } from '../../src/server/config.js'
import type { Route } from '../../src/server/rest/adapter.js'
import { mobileRoutes } from '../../src/server/rest/mobile.js'
import { rootRoutes, utilityRoutes } from '../../src/server/rest/utility.js'
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js'

let server: TestServer
let document: any

test.before(async () => {
  server = await startTestServer()
  document = (await server.request('GET', '/api/openapi.json')).body
})
test.after(() => server.close())

const METHODS = ['get', 'put', 'post', 'delete', 'patch']

function operations(): Array<{ method: string; path: string; operation: any }> {
  return Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
  )
}

/** `METHOD /path/{name}` for every route of a table; an optional last segment gives the path with and without it. */
function expected(prefix: string, routes: Route[]): string[] {
  return routes.flatMap((route) => {
    const withParam = prefix + route.path.replace(/:(\w+)\??/g, '{$1}')
    return /:\w+\?$/.test(route.path) ? [`${route.method} ${withParam.replace(/\/\{\w+\}$/, '')}`, `${route.method} ${withParam}`] : [`${route.method} ${withParam}`]
  })
}

function getWithHost(url: string, host: string, ifNoneMatch: string): Promise<{ status: number; etag: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { host, 'if-none-match': ifNoneMatch } }, (res) => {
        let body = ''
        res.on('data', (chunk) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode!, etag: String(res.headers.etag), body }))
      })
      .on('error', reject)
  })
}

const operation = (method: string, path: string) => document.paths[path]?.[method.toLowerCase()]

test('the served document is valid OpenAPI 3.1', async () => {
  assert.is(document.openapi, '3.1.0')
  const result = await new Validator().validate(document)
  assert.ok(result.valid, JSON.stringify(result.errors, null, 1)?.slice(0, 2000))
})

/** A path as OpenAPI compares templates: the parameters' names do not count. */
const template = (line: string) => line.replace(/\{\w+\}/g, '{}')

test('`redocly lint` (its recommended rules, as redocly.yaml sets them) finds nothing in the served document', async () => {
  const file = path.join(tempDir(), 'openapi.json')
  writeFileSync(file, JSON.stringify(document, null, 1))
  const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js')
  // No telemetry and no update check: nothing leaves the machine.
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' }
  const run = await promisify(execFile)(process.execPath, [cli, 'lint', file, '--config', 'redocly.yaml', '--format=json'], { env, maxBuffer: 64 * 1024 * 1024 }).catch((error) => error)
  const report = JSON.parse(run.stdout)
  const problems = report.problems.map((problem: any) => `${problem.ruleId}: ${problem.message} (${problem.location?.[0]?.pointer})`)
  assert.equal(problems.slice(0, 20), [], `${problems.length} problems`)
  assert.equal(report.totals, { errors: 0, warnings: 0, ignored: 0 })
})

test('every operation has a success among its answers (2xx, or the 302 of a redirect)', () => {
  for (const { method, path, operation } of operations()) {
    const successes = Object.keys(operation.responses).filter((status) => /^2\d\d$/.test(status) || (status === '302' && operation.responses[status].headers?.Location))
    assert.ok(successes.length > 0, `${method} ${path}`)
  }
})

test('every route of the route tables and /health appears with its method, and nothing else does', () => {
  const want = [...expected('/api/mobile', mobileRoutes), ...expected('/api', utilityRoutes), ...expected('', rootRoutes), 'GET /health'].map(template).sort()
  const have = operations().map(({ method, path }) => template(`${method} ${path}`)).sort()
  assert.equal(have, want)
  assert.ok(have.includes('POST /api/mobile/posts/create') && have.includes('GET /api/mobile/user/profile/{}') && have.includes('GET /api/mobile/user/profile'))
  assert.ok(have.includes('GET /api/openapi.json') && have.includes('GET /docs'))
  assert.not.ok(Object.keys(document.paths).some((path) => path.includes(':')), 'no `:name` path syntax')
})

test('no two paths are one template: where parameter names differ, the document names the segment `id` and says which id it is', () => {
  const templates = Object.keys(document.paths).map(template)
  assert.is(new Set(templates).size, templates.length)
  // The URLs stay the spec's: POST /interactions/comment/:post_id and DELETE /interactions/comment/:comment_id.
  const comment = document.paths['/api/mobile/interactions/comment/{id}']
  assert.ok(comment, Object.keys(document.paths).filter((path) => path.includes('/comment')).join(', '))
  assert.equal(comment.post.parameters[0].name, 'id')
  assert.match(comment.post.parameters[0].description, '`post_id`')
  assert.match(comment.delete.parameters[0].description, '`comment_id`')
  assert.not.ok(document.paths['/api/mobile/interactions/comment/{post_id}'])
  assert.equal(Object.keys(comment.post.requestBody.content['application/json'].schema.properties).sort(), ['content', 'image', 'parent_id'])
  // Other paths keep their parameters' own names.
  assert.ok(document.paths['/api/mobile/posts/{post_id}'])
})

/**
 * redocly's no-ambiguous-paths is off (redocly.yaml): it calls `/posts/detail/{post_id}` and
 * `/posts/{post_id}/bookmark` ambiguous because it does not read the parameters' schemas. This is
 * the rule it stands for, with them: two paths of as many segments must differ somewhere by two
 * fixed texts, or by a fixed text the other's parameter cannot take there (`detail` is no integer).
 */
test('no URL fits two paths: where one path has a parameter, the other path\'s fixed text there is not a value of it', () => {
  const segmentsOf = (path: string) => {
    const parameters = Object.values(document.paths[path] as Record<string, any>).flatMap((op) => op.parameters ?? [])
    return path.split('/').filter(Boolean).map((segment) => {
      const name = /^\{(\w+)\}$/.exec(segment)?.[1]
      return name ? { schema: parameters.find((p: any) => p.in === 'path' && p.name === name)?.schema ?? {} } : { text: segment }
    })
  }
  const takes = (schema: any, text: string) => (schema.type === 'integer' ? /^\d+$/.test(text) : schema.enum ? schema.enum.includes(text) : schema.pattern ? new RegExp(schema.pattern, 'u').test(text) : true)
  const paths = Object.keys(document.paths)
  const ambiguous: string[] = []
  for (const [i, a] of paths.entries()) {
    for (const b of paths.slice(i + 1)) {
      const sa = segmentsOf(a)
      const sb = segmentsOf(b)
      if (sa.length !== sb.length) continue
      const apart = sa.some((x, k) => {
        const y = sb[k]
        if ('text' in x && 'text' in y) return x.text !== y.text
        if ('text' in x) return !takes(y.schema, x.text!)
        if ('text' in y) return !takes(x.schema, y.text!)
        return false
      })
      if (!apart) ambiguous.push(`${a} and ${b}`)
    }
  }
  assert.equal(ambiguous, [])
  // The pair redocly names: /posts/detail/bookmark is a URL of neither (detail and bookmark are no post ids).
  assert.ok(document.paths['/api/mobile/posts/detail/{post_id}'] && document.paths['/api/mobile/posts/{post_id}/bookmark'])
})

test('operation ids are unique and read like the procedure or path', () => {
  const ids = operations().map(({ operation }) => operation.operationId)
  assert.is(new Set(ids).size, ids.length)
  assert.is(operation('POST', '/api/mobile/posts/create').operationId, 'postsCreate')
  assert.is(operation('GET', '/api/mobile/user/profile/{user_id}').operationId, 'usersProfileByUserId')
  assert.is(operation('POST', '/api/mobile/upload/post').operationId, 'uploadPost')
  assert.is(operation('POST', '/api/codeimage').operationId, 'codeimage')
  assert.is(operation('POST', '/api/v1/chat/completions').operationId, 'v1ChatCompletions')
  assert.equal(operation('POST', '/api/codeimage').tags, ['Maker'])
  assert.equal(operation('GET', '/api/mobile/posts/feed').tags, ['posts'])
})

test('posts.create takes the fields of its zod schema as a JSON body, answers 201 with the envelope', () => {
  const create = operation('POST', '/api/mobile/posts/create')
  const body = create.requestBody.content['application/json'].schema
  assert.equal(Object.keys(body.properties).sort(), ['content', 'image', 'is_public', 'media'])
  assert.is(body.properties.content.maxLength, 2200)
  assert.is(body.properties.media.maxItems, 10)
  assert.is(body.properties.media.items.properties.alt.maxLength, 1500)
  assert.is(body.properties.is_public.type, 'boolean')
  assert.ok(create.responses['201'], 'created')
  assert.not.ok(create.responses['200'])
  assert.match(JSON.stringify(create.responses['201'].content['application/json'].schema), '#/components/schemas/Envelope')
  assert.equal(create.responses['400'], { $ref: '#/components/responses/BadRequest' })
  assert.equal(create.responses['413'], { $ref: '#/components/responses/PayloadTooLarge' })
  assert.ok(document.components.responses.TooManyRequests.headers['Retry-After'])
})

test('path fields become path parameters; the rest are query parameters on GET, a body otherwise', () => {
  const detail = operation('GET', '/api/mobile/posts/detail/{post_id}')
  assert.equal(
    detail.parameters.map((p: any) => `${p.in}:${p.name}:${p.required}`),
    ['path:post_id:true', 'query:page:false', 'query:limit:false'],
  )
  assert.is(detail.parameters[0].schema.type, 'integer')
  assert.not.ok(detail.requestBody)
  assert.ok(detail.responses['404'])

  const edit = operation('PUT', '/api/mobile/posts/{post_id}')
  assert.equal(edit.parameters.map((p: any) => p.name), ['post_id'])
  const editBody = edit.requestBody.content['application/json'].schema
  assert.equal(Object.keys(editBody.properties).sort(), ['content', 'image', 'is_public', 'media'])
  // A field the route cannot apply admits no value (and says why); the ones it does not know are ignored.
  assert.equal(editBody.properties.image.not, {})
  assert.match(editBody.properties.image.description, /^Refused: image cannot be changed/)
  assert.is(editBody.additionalProperties, true)

  // The optional segment's field is a path field only: never a query parameter or body field of the shorter path.
  const own = operation('GET', '/api/mobile/user/profile')
  assert.not.ok(own.parameters)
  assert.not.ok(own.responses['404'])
  const markAll = operation('PUT', '/api/mobile/notifications/mark_read')
  assert.not.ok(markAll.requestBody)
})

test('/upload/post is multipart with a binary file field and answers 201', () => {
  const upload = operation('POST', '/api/mobile/upload/post')
  const form = upload.requestBody.content['multipart/form-data'].schema
  assert.equal(form.required, ['file'])
  assert.is(form.properties.file.type, 'string')
  assert.is(form.properties.file.format, 'binary')
  assert.ok(upload.responses['201'])
  assert.ok(upload.responses['413'])
  assert.equal(upload.security, [{ bearerAuth: [] }])
})

test('other media: an event stream, an image or JSON, chat as JSON or a stream with OpenAI errors on /api/v1', () => {
  assert.ok(operation('GET', '/api/mobile/notifications/stream').responses['200'].content['text/event-stream'])
  const codeimage = operation('POST', '/api/codeimage').responses['200'].content
  assert.equal(Object.keys(codeimage).sort(), ['application/json', 'image/*'])
  const chat = operation('POST', '/api/v1/chat/completions')
  assert.equal(Object.keys(chat.responses['200'].content).sort(), ['application/json', 'text/event-stream'])
  assert.equal(chat.responses['400'], { $ref: '#/components/responses/OpenAIBadRequest' })
  assert.equal(operation('POST', '/api/chaty').responses['400'], { $ref: '#/components/responses/BadRequest' })
  assert.ok(operation('GET', '/docs').responses['200'].content['text/html'])
})

test("Anthropic's Messages API declares Anthropic's error shape, and answers it even for a refusal made before its handler runs", async () => {
  const messages = operation('POST', '/api/v1/messages')
  assert.equal(messages.responses['400'], { $ref: '#/components/responses/AnthropicBadRequest' })
  assert.equal(messages.responses['413'], { $ref: '#/components/responses/AnthropicPayloadTooLarge' })
  assert.equal(document.components.responses.AnthropicBadRequest.content['application/json'].schema, { $ref: '#/components/schemas/AnthropicError' })
  // Malformed JSON is refused by the adapter, before the gateway's handler: the same shape as the handler's own errors.
  const malformed = await server.request('POST', '/api/v1/messages', { raw: '{"model": ', headers: { 'content-type': 'application/json' } })
  assert.is(malformed.status, 400)
  assert.is(malformed.body.type, 'error')
  assert.is(malformed.body.error.type, 'invalid_request_error')
  assert.type(malformed.body.error.message, 'string')
  const oversize = await server.request('POST', '/api/v1/messages', { raw: JSON.stringify({ model: 'x', max_tokens: 1, messages: [{ role: 'user', content: 'x'.repeat(40 * 1024 * 1024) }] }), headers: { 'content-type': 'application/json' } })
  assert.is(oversize.status, 413)
  assert.equal(oversize.body.error.type, 'request_too_large')
  // The other gateway paths keep OpenAI's.
  const chat = await server.request('POST', '/api/v1/chat/completions', { raw: '{"model": ', headers: { 'content-type': 'application/json' } })
  assert.is(chat.status, 400)
  assert.is(chat.body.error.type, 'invalid_request_error')
  assert.is(chat.body.type, undefined)
})

test('rate-limit fields: every answer of a counted operation declares RateLimit and RateLimit-Policy, a 429 Retry-After too, and a server with limits sends them', async () => {
  // The operations a rate limit counts are those that can answer 429: the social API, the catalog, the gateway.
  const counted = operations().filter(({ operation }) => operation.responses['429'])
  assert.ok(counted.length > 100 && counted.some(({ path }) => path === '/api/mobile/auth/login') && counted.some(({ path }) => path === '/api/v1/chat/completions'))
  for (const { method, path, operation } of operations()) {
    const [status, success] = Object.entries(operation.responses as Record<string, any>).find(([code]) => /^[23]/.test(code))!
    const declared = Object.keys(success.headers ?? {}).filter((name) => name.startsWith('RateLimit'))
    assert.equal(declared, operation.responses['429'] ? ['RateLimit', 'RateLimit-Policy'] : [], `${method} ${path} ${status}`)
  }
  const tooMany = document.components.responses.TooManyRequests
  assert.equal(Object.keys(tooMany.headers), ['Retry-After', 'RateLimit', 'RateLimit-Policy'])
  assert.equal(Object.keys(document.components.headers).filter((name) => name.startsWith('RateLimit')), ['RateLimit', 'RateLimitPolicy'])

  const limited = await startTestServer({ rateLimits: DEFAULT_RATE_LIMITS })
  try {
    const res = await limited.request('POST', '/api/mobile/auth/register', { body: { username: 'paced', email: 'paced@example.com', password: 'correct horse battery' } })
    assert.is(res.status, 201)
    // The calls of an address (`default`); a registration counts only as a call.
    assert.match(res.headers.get('ratelimit') ?? '', /^"default";r=\d+;t=\d+$/)
    assert.match(res.headers.get('ratelimit-policy') ?? '', /^"default";q=\d+;w=\d+$/)
  } finally {
    await limited.close()
  }
})

test('bearer security and 401 where a token is needed, an optional token where it is optional, none where public', () => {
  assert.equal(document.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', description: document.components.securitySchemes.bearerAuth.description })
  const feed = operation('GET', '/api/mobile/posts/feed')
  assert.equal(feed.security, [{ bearerAuth: [] }])
  assert.equal(feed.responses['401'], { $ref: '#/components/responses/Unauthorized' })
  const explore = operation('GET', '/api/mobile/posts/explore')
  assert.equal(explore.security, [{}, { bearerAuth: [] }])
  const register = operation('POST', '/api/mobile/auth/register')
  // Public operations say so: an empty list, not a missing one (which would mean the document's default).
  assert.equal(register.security, [])
  assert.not.ok(register.responses['401'])
  assert.equal(operation('GET', '/health').security, [])
  assert.ok(operations().every(({ operation }) => Array.isArray(operation.security)))
  // A gateway operation takes a gateway key, needed once the operator has created any; the agent always needs a premium one.
  assert.equal(operation('POST', '/api/v1/chat/completions').security, [{}, { gatewayKey: [] }])
  assert.equal(operation('POST', '/api/agent').security, [{ gatewayKey: [] }])
  assert.equal(operation('GET', '/api/metrics').security, [{}, { metricsToken: [] }])
})

test('each operation declares the errors it answers beyond its shape, with when: from the procedure, the route and the code it reaches', () => {
  const response = (op: any, status: number) => {
    const declared = op.responses[String(status)]
    assert.ok(declared, `${op.operationId} declares ${status}`)
    return declared.$ref ? document.components.responses[declared.$ref.split('/').pop()] : declared
  }
  const described = (op: any, status: number) => response(op, status).description
  const shape = (op: any, status: number) => response(op, status).content['application/json'].schema.$ref.split('/').pop()
  assert.match(described(operation('POST', '/api/mobile/auth/login'), 401), 'Wrong email (or username) or password')
  assert.match(described(operation('POST', '/api/mobile/auth/register'), 409), 'The username is taken')
  assert.match(described(operation('POST', '/api/mobile/reports'), 409), 'already reported')
  // A provider-backed operation: not configured, failed, timed out.
  const imagine = operation('GET', '/api/imagine')
  assert.match(described(imagine, 503), 'No provider is configured')
  assert.ok(imagine.responses['502'] && imagine.responses['504'])
  // The chat operations: the gateway's key, model and upstream failures; OpenAI's shape on /api/v1.
  const chat = operation('POST', '/api/v1/chat/completions')
  for (const status of [400, 401, 403, 404, 429, 502, 503, 504]) assert.is(shape(chat, status), 'OpenAIError', String(status))
  assert.match(described(chat, 401), 'gateway keys')
  const chaty = operation('POST', '/api/chaty')
  for (const status of [401, 403, 404, 502, 503, 504]) assert.is(shape(chaty, status), 'ErrorEnvelope', String(status))
  assert.match(described(operation('GET', '/api/chat'), 409), 'Another message of this conversation')
  // An image read from a URL: the fetch guard's refusals.
  const fx = operation('GET', '/api/imageFx')
  for (const status of [404, 413, 415, 422, 504]) assert.ok(fx.responses[String(status)], String(status))
  // Refusals before routing are the envelope even on the OpenAI-compatible paths.
  assert.equal(chat.responses['431'], { $ref: '#/components/responses/HeadersTooLarge' })
  assert.is(shape(chat, 431), 'ErrorEnvelope')
  // Only components some operation uses are written.
  const used = JSON.stringify(document.paths)
  for (const name of Object.keys(document.components.responses)) assert.match(used, `#/components/responses/${name}"`, name)
})

test('what the document says about tokens is what the server does: every operation that needs one refuses a call without it', async () => {
  const needing = operations().filter(({ operation }) => JSON.stringify(operation.security) === '[{"bearerAuth":[]}]')
  assert.ok(needing.length > 30)
  for (const { method, path } of needing) {
    const answer = await server.request(method, path.replace(/\{\w+\}/g, '1'), method === 'GET' || method === 'DELETE' ? {} : { body: {} })
    assert.is(answer.status, 401, `${method} ${path}`)
  }
  const publicOnes = operations().filter(({ path, operation }) => operation.security.length === 0 && path.startsWith('/api/mobile/'))
  for (const { method, path } of publicOnes) {
    const answer = await server.request(method, path, method === 'GET' ? {} : { body: {} })
    assert.is.not(answer.status, 401, `${method} ${path}`)
  }
})

test('servers is the request origin; the document carries an ETag and revalidates to a 304', async () => {
  const first = await server.request('GET', '/api/openapi.json')
  assert.equal(first.body.servers, [{ url: server.url }])
  const etag = first.headers.get('etag')!
  assert.match(etag, /^"[\w-]+"$/)
  assert.is(first.headers.get('cache-control'), 'no-cache')
  const again = await server.request('GET', '/api/openapi.json', { headers: { 'if-none-match': etag } })
  assert.is(again.status, 304)
  // Another origin (fetch cannot set Host): other servers, so another ETag.
  const elsewhere = await getWithHost(server.url + '/api/openapi.json', 'plaza.example:8443', etag)
  assert.is(elsewhere.status, 200)
  assert.equal(JSON.parse(elsewhere.body).servers, [{ url: 'http://plaza.example:8443' }])
  assert.is.not(elsewhere.etag, etag)
})

test('named zod schemas become components; a name whose request and answer forms differ gets an Input twin', () => {
  const schemas = createSchemaCollector()
  const when = z.string().meta({ id: 'TestWhen' })
  const page = z.object({ size: z.number().default(20), at: when }).meta({ id: 'TestPage' })
  const request = schemas.toSchema(z.object({ page, since: when }), 'input')
  const answer = schemas.toSchema(z.object({ page }), 'output')
  assert.equal(request.properties, { page: { $ref: '#/components/schemas/TestPageInput' }, since: { $ref: '#/components/schemas/TestWhen' } })
  assert.equal(answer.properties, { page: { $ref: '#/components/schemas/TestPage' } })
  assert.equal((schemas.components.TestPage.properties as any).at, { $ref: '#/components/schemas/TestWhen' })
  assert.equal(schemas.components.TestPage.required, ['size', 'at'])
  assert.equal(schemas.components.TestPageInput.required, ['at'])
  assert.is(request.$schema, undefined)
  // Types JSON Schema cannot express (a date) are left open rather than failing the document.
  assert.equal(schemas.toSchema(z.object({ d: z.date() }), 'input').properties, { d: {} })
})

test.run()
