/**
 * Object.prototype's names as input (issue #44, finding 1): `GET /api/logo?color=constructor` found
 * Object's constructor in the colour table, answered 500 and wedged a render thread. Every
 * parameter of every operation in the OpenAPI document (path, query and JSON body, mobile and
 * utility alike, so an operation added later is covered without touching this file) gets
 * `constructor`, `__proto__`, `toString`, `hasOwnProperty` and `prototype`, and each must be
 * answered exactly as a name no table holds (`zzqxunknown`; `__zzqx__` beside `__proto__`, for
 * parameters that refuse underscores) is: a 400 where the parameter names something from a list,
 * the same success where it is free text, never a 5xx.
 *
 * So that each parameter is reached, every other required one gets a valid value: from
 * BASE_VALUES by name, an override in OPERATIONS, or the schema's first enum value. A required
 * parameter with none fails the test, naming what to add; and each operation's base request
 * must itself succeed (OPERATIONS says why for the few that cannot).
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startStandIns } from '../helpers/stand-ins.js'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { solidImage } from '../uploads/fixtures.js'
import { startSmtpServer } from '../helpers/smtp.js'

const PROTOTYPE_KEYS = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'prototype']
/** A name of the same characters as `key` that no table holds. */
const unknownLike = (key: string) => (key === '__proto__' ? '__zzqx__' : 'zzqxunknown')

type Json = Record<string, any>
interface Parameter {
  name: string
  in: 'path' | 'query' | 'body'
  required: boolean
  schema: Json
}
interface Operation {
  method: string
  path: string
  key: string
  parameters: Parameter[]
  multipart: boolean
}

/** What each operation needs beyond BASE_VALUES: values of its own, a fresh account per request, or why its base request cannot succeed. */
interface Override {
  /** Values for its parameters, required or not (a post needs content or an image; the schema cannot say so). */
  values?: Record<string, unknown>
  /** Acts on the caller's account (password, deletion): after a request that succeeds, the next signs up someone new. */
  fresh?: boolean
  /** Why the base request is not expected to succeed (its parameters are still checked against the unknown name). */
  noBase?: string
}

interface World {
  newPost(): Promise<{ id: number }>
  pngUrl: string
  alice: RegisteredUser
  bob: RegisteredUser
  postId: number
  commentId: number
  storyId: number
}

function baseValues(world: World): Record<string, unknown> {
  return {
    // The social API's fields and ids.
    username: 'plaza', email: 'someone@example.com', password: 'correct horse', full_name: 'Plaza', content: 'hello #plaza',
    current_password: 'correct horse', new_password: 'battery staple', user_id: world.bob.id, post_id: world.postId,
    comment_id: world.commentId, story_id: world.storyId, notification_id: 1, q: 'plaza', content_type: 'text', text_content: 'hi',
    tag: 'keys',
    target_type: 'post', target_id: world.postId, reason: 'spam', note: 'looks automated',
    // The catalog's.
    text: 'hello', prompt: 'a fox in the snow', code: 'console.log(1)', codeSnippet: 'const x = 1', language: 'javascript',
    messages: [{ role: 'user', content: 'hi' }], location: 'Berlin', ratio: '16:9', url: world.pngUrl, imageUrl: world.pngUrl, effect: 'sepia',
    asset: 'plaza-docs.js', id: 'fake-model',
  }
}

function operationsTable(world: World): Record<string, Override> {
  return {
    'POST /api/mobile/auth/register': { values: { username: () => `proto${++seq}`, email: () => `proto${++seq}@example.com` } },
    'POST /api/mobile/auth/login': { values: { email: `${world.alice.username}@example.com` } },
    'PUT /api/mobile/user/password': { fresh: true },
    'DELETE /api/mobile/user/account': { fresh: true },
    // A second report of the same post is a 409: each request reports a new one.
    'POST /api/mobile/reports': { values: { target_id: async () => (await world.newPost()).id } },
    'POST /api/mobile/posts/create': { values: { content: 'hello' } },
    'PUT /api/mobile/posts/{post_id}': { values: { content: 'edited' } },
    'POST /api/mobile/stories/create': { values: { text_content: 'hi' } },
    'DELETE /api/mobile/auth/sessions/{id}': { noBase: 'the session to revoke is the caller\'s own, made per request', values: { id: 1 } },
    'DELETE /api/mobile/posts/{post_id}': { noBase: 'it would delete the post the other operations use' },
    // One path, two ids: a comment is made on a post and deleted by its own id.
    'POST /api/mobile/interactions/comment/{id}': { values: { id: world.postId } },
    'DELETE /api/mobile/interactions/comment/{id}': { noBase: 'it would delete the comment the other operations use', values: { id: world.commentId } },
    'DELETE /api/mobile/stories/{story_id}': { noBase: 'it would delete the story the other operations use' },
    'POST /api/mobile/user/follow/{user_id}': { noBase: 'alice already follows bob (a repeat is a 409)' },
    'POST /api/mobile/user/follow-requests/{user_id}/approve': { noBase: 'alice is public: nobody asked to follow her' },
    'POST /api/mobile/user/follow-requests/{user_id}/deny': { noBase: 'alice is public: nobody asked to follow her' },
    'DELETE /api/mobile/interactions/unlike/{post_id}': { noBase: 'alice has not liked the post' },
    'PUT /api/mobile/notifications/mark_read/{notification_id}': { noBase: 'alice has no notification 1' },
    'GET /api/mobile/stories/view/{story_id}': {},
    // Push, mailed links and two-factor login (#48): their secrets come by mail or from an authenticator app, so no base request
    // can succeed here; each parameter still gets Object.prototype's names beside a well-formed request.
    'POST /api/mobile/auth/password/reset': { noBase: 'the token comes by mail', values: { token: 'zzqxtoken', new_password: 'battery staple' } },
    'GET /api/mobile/auth/password/reset': { noBase: 'the token comes by mail', values: { token: 'zzqxtoken' } },
    'POST /api/mobile/auth/email/verify': { noBase: 'the token comes by mail', values: { token: 'zzqxtoken' } },
    'GET /api/mobile/auth/email/verify': { noBase: 'the token comes by mail', values: { token: 'zzqxtoken' } },
    'POST /api/mobile/auth/login/2fa': { noBase: 'the challenge and the code come from a two-factor login', values: { challenge_token: 'zzqxtoken', code: '123456' } },
    'POST /api/mobile/auth/2fa/confirm': { noBase: 'the code comes from an authenticator app', values: { code: '123456' } },
    'POST /api/mobile/auth/2fa/disable': { noBase: 'alice has no two-factor login', values: { code: '123456' } },
    'POST /api/mobile/auth/2fa/recovery_codes': { noBase: 'alice has no two-factor login', values: { code: '123456' } },
    'POST /api/mobile/push/subscription': {
      noBase: "a push service's endpoint must resolve, which a test cannot rely on",
      values: { subscription: { endpoint: 'https://push.example.com/send/zzqx', keys: { p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM', auth: 'tBHItJI5svbpez7KI4CCXg' } } },
    },
    'PUT /api/mobile/push/subscription': { noBase: 'alice has no push subscription', values: { data: { alerts: { follow: true } } } },
    // Catalog operations whose inputs are not the shared names.
    'POST /api/execute': { values: { language: 'javascript', code: 'console.log(1)' } },
    'GET /api/media': { values: { url: 'https://youtu.be/dQw4w9WgXcQ', fetch: '0' } },
    'GET /api/lens': { values: { url: 'http://93.184.216.34/bridge.jpg' } },
    'GET /api/identify': { values: { url: 'http://93.184.216.34/song.mp3' } },
    'GET /api/imageFx': { values: { url: world.pngUrl, effect: 'sepia' } },
    'POST /api/imageFx': { values: { effect: 'sepia' } },
    'POST /api/carbon': { values: { code: 'const x = 1' } },
    'POST /api/codeimage': { values: { codeSnippet: 'const x = 1', format: 'svg' } },
    'GET /api/fakepost': { values: { username: 'plaza' } },
    'GET /api/meme': { values: { template: 'this-is-fine', top: 'a' } },
    'GET /api/reasoning-small': { values: { content: 'hi' } },
    'GET /api/gpt': { values: { content: 'hi' } },
    'GET /api/chat': { values: { content: 'hi' } },
    'POST /api/agent': { values: { prompt: 'print 1' } },
    'POST /api/chat': { values: { content: 'hi' } },
    'GET /api/v1/models/{id}': { noBase: 'the fake upstream serves no model by a fixed name' },
    // The gateway's OpenAI- and Anthropic-shaped operations (any model name reaches the fake upstream).
    'POST /api/v1/responses': { values: { input: 'hi' } },
    'GET /api/v1/responses/{id}': { noBase: 'no stored response has a fixed id' },
    'DELETE /api/v1/responses/{id}': { noBase: 'no stored response has a fixed id' },
    'POST /api/v1/messages': { values: { model: 'fake-model', max_tokens: 16 } },
    'POST /api/v1/embeddings': { values: { model: 'fake-model', input: 'hello' } },
    'POST /api/v1/moderations': { values: { input: 'hello' } },
    'POST /api/v1/audio/speech': { values: { model: 'tts-1', input: 'hello', voice: 'alloy' } },
    'POST /api/v1/audio/transcriptions': { values: { model: 'whisper-1' } },
  }
}
let seq = 0

function operationsOf(doc: Json): Operation[] {
  const resolve = (schema: Json | undefined): Json | undefined => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema)
  const operations: Operation[] = []
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (!op?.responses) continue
      const parameters: Parameter[] = (op.parameters ?? []).map((p: Json) => ({ name: p.name, in: p.in, required: Boolean(p.required), schema: p.schema ?? {} }))
      const body = resolve(op.requestBody?.content?.['application/json']?.schema)
      for (const [name, schema] of Object.entries<Json>(body?.properties ?? {})) {
        parameters.push({ name, in: 'body', required: (body?.required ?? []).includes(name), schema })
      }
      const upper = method.toUpperCase()
      operations.push({
        method: upper,
        path,
        key: `${upper} ${path}`,
        parameters,
        multipart: Boolean(op.requestBody?.content?.['multipart/form-data']),
      })
    }
  }
  return operations
}

async function send(server: TestServer, op: Operation, values: Map<string, unknown>, token: string | undefined, png: Buffer): Promise<{ status: number; text: string }> {
  let path = op.path
  const query = new URLSearchParams()
  const body: Json = {}
  for (const parameter of op.parameters) {
    if (!values.has(parameter.name)) continue
    const value = values.get(parameter.name)
    if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(value)))
    else if (parameter.in === 'query') query.set(parameter.name, String(value))
    else body[parameter.name] = value
  }
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {}
  let payload: string | FormData | undefined
  if (op.multipart) {
    payload = new FormData()
    payload.set('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'x.png')
  } else if (op.method !== 'GET' && op.method !== 'DELETE') {
    headers['content-type'] = 'application/json'
    payload = JSON.stringify(body)
  } else if (Object.keys(body).length > 0) {
    headers['content-type'] = 'application/json'
    payload = JSON.stringify(body)
  }
  const url = `${server.url}${path}${query.size ? `?${query}` : ''}`
  const response = await fetch(url, { method: op.method, headers, body: payload, redirect: 'manual' })
  // An event stream or a long answer: the status is what counts.
  const text = response.headers.get('content-type')?.startsWith('application/json') ? await response.text() : (await response.body?.cancel(), '')
  return { status: response.status, text }
}

test('every parameter of every operation answers Object.prototype names as it answers an unknown name: no 5xx, a 400 where a table is looked up', async () => {
  const standIns = await startStandIns()
  // Mail goes to a real SMTP server on loopback (the forgot-password and verification operations need it set up).
  const smtp = await startSmtpServer()
  const png = await solidImage(16, 16, 'png')
  const images = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png))
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve))
  const server = await startTestServer({
    rateLimits: false,
    env: {
      ...standIns.env,
      PLAZA_FETCH_ALLOW_PRIVATE: '1',
      ...smtp.env,
    },
  })
  try {
    const alice = await registerUser(server)
    const bob = await registerUser(server)
    await server.request('POST', `/api/mobile/user/follow/${bob.id}`, { token: alice.token })
    const post = await server.request('POST', '/api/mobile/posts/create', { token: alice.token, body: { content: 'proto #keys' } })
    const comment = await server.request('POST', `/api/mobile/interactions/comment/${post.body.data.id}`, { token: alice.token, body: { content: 'a comment' } })
    const story = await server.request('POST', '/api/mobile/stories/create', { token: alice.token, body: { content_type: 'text', text_content: 'hi' } })
    // Once a key exists the gateway wants one; premium, so that POST /api/agent runs (against the fake upstream).
    const gateway = await (await server.services.gatewayAccess()).createKey({ name: 'proto', rpm: 1_000_000, premium: true })
    const world: World = {
      newPost: async () => (await server.request('POST', '/api/mobile/posts/create', { token: bob.token, body: { content: 'to report' } })).body.data,
      pngUrl: `http://127.0.0.1:${(images.address() as AddressInfo).port}/x.png`,
      alice,
      bob,
      postId: post.body.data.id,
      commentId: comment.body.data.id,
      storyId: story.body.data.id,
    }
    const named = baseValues(world)
    const table = operationsTable(world)
    const doc = (await server.request('GET', '/api/openapi.json')).body
    // Registration last: it signs up users named after the keys, whom a username parameter would then find.
    const operations = operationsOf(doc)
      .filter((op) => op.parameters.length > 0)
      .sort((a, b) => Number(a.path.endsWith('/auth/register')) - Number(b.path.endsWith('/auth/register')))
    assert.ok(operations.length > 50, `only ${operations.length} operations with parameters`)

    const problems: string[] = []
    let checked = 0
    for (const op of operations) {
      const started = performance.now()
      const override = table[op.key] ?? {}
      const valueOf = async (parameter: Parameter): Promise<unknown> => {
        const given = override.values && Object.hasOwn(override.values, parameter.name) ? override.values[parameter.name] : Object.hasOwn(named, parameter.name) ? named[parameter.name] : parameter.schema.enum?.[0]
        return typeof given === 'function' ? await given() : given
      }
      const base = async () => {
        const values = new Map<string, unknown>()
        for (const parameter of op.parameters) {
          if (!parameter.required && !(override.values && Object.hasOwn(override.values, parameter.name))) continue
          const value = await valueOf(parameter)
          if (value === undefined) problems.push(`${op.key}: no base value for the required ${parameter.in} parameter ${parameter.name}: add one to BASE_VALUES or OPERATIONS`)
          else values.set(parameter.name, value)
        }
        return values
      }
      // The social API's session (someone new after a success, for operations that change the account), or the gateway's key on the catalog.
      let fresh: string | null = null
      const call = async (values: Map<string, unknown>) => {
        if (!op.path.startsWith('/api/mobile/')) return send(server, op, values, gateway.key, png)
        if (!override.fresh) return send(server, op, values, alice.token, png)
        fresh ??= (await registerUser(server)).token
        const answer = await send(server, op, values, fresh, png)
        if (answer.status < 300) fresh = null
        return answer
      }
      if (!override.noBase) {
        const answer = await call(await base())
        if (answer.status >= 400) problems.push(`${op.key}: the base request answered ${answer.status} (${answer.text.slice(0, 160)}); give its parameters valid values in OPERATIONS`)
      }
      for (const parameter of op.parameters) {
        const answers = new Map<string, { status: number; text: string }>()
        for (const value of new Set([...PROTOTYPE_KEYS.map(unknownLike), ...PROTOTYPE_KEYS])) {
          const values = await base()
          values.set(parameter.name, value)
          const answer = await call(values)
          answers.set(value, answer)
          if (answer.status >= 500) problems.push(`${op.key} ${parameter.name}=${value}: ${answer.status} ${answer.text.slice(0, 160)}`)
        }
        checked++
        for (const key of PROTOTYPE_KEYS) {
          const got = answers.get(key)!
          const expected = answers.get(unknownLike(key))!
          if (got.status !== expected.status) problems.push(`${op.key} ${parameter.name}=${key}: ${got.status}, but ${unknownLike(key)} answers ${expected.status} (${got.text.slice(0, 160)})`)
        }
      }
      if (process.env.PLAZA_PROTO_VERBOSE) console.log(`${op.key}: ${op.parameters.length} parameters, ${Math.round(performance.now() - started)} ms`)
    }
    assert.equal(problems, [], `${problems.length} problems`)
    assert.ok(checked > 200, `only ${checked} parameters checked`)
    assert.is((await server.request('GET', '/health')).status, 200)
  } finally {
    await server.close()
    images.close()
    await standIns.close()
    await smtp.close()
  }
})

test.run()
