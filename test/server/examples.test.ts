/**
 * Every operation's example request, as /api/openapi.json publishes it (and the reference page's
 * "Try it" fills it in), sent as it stands to a server whose providers are loopback stand-ins
 * (helpers/stand-ins.ts): each must succeed, and its answer must be one the document declares.
 * The examples tell one story (catalog/system/examples.ts): alice registers (user 1) and logs in,
 * follows user 2, blocks and mutes user 3; her post, comment and story are number 1. The test only
 * adds what an example cannot carry: users 2 and 3, a notification for alice, her account made
 * private and the requests of users 4 and 5 (erin and frank) to follow it, a file for the
 * uploads, a token, and the secrets a person gets elsewhere: a reset or verification link's token
 * from the mail a real SMTP server on loopback received (smtp-server), and two-factor codes from
 * the secret that setting it up answered (for dave, so that alice's logins stay one step). The
 * calls on the push subscription share one session, as a subscription is the session's.
 *
 * The image, page and recording URLs of the examples are on the public web, which a test cannot
 * reach: they are sent to a loopback server instead (PLAZA_FETCH_ALLOW_PRIVATE=1), path and all,
 * which answers a picture, a page or a recording as the real ones would.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { totpCodeAt } from '../../src/server/auth/totp.js'
import { fakeAudio } from '../providers/fake-providers.js'
import { createOpenApiValidator } from '../helpers/openapi-validator.js'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { startSmtpServer, type SmtpServer } from '../helpers/smtp.js'
import { startStandIns, type StandIns } from '../helpers/stand-ins.js'
import { solidImage } from '../uploads/fixtures.js'

interface Operation {
  method: string
  path: string
  operation: any
}

let server: TestServer
let standIns: StandIns
let smtp: SmtpServer
let web: http.Server
let webUrl: string
let document: any

/** The public web of the examples, on loopback: a JPEG for a picture, a WAV for a recording, else a page. */
async function startWeb(): Promise<http.Server> {
  const jpeg = await solidImage(320, 200, 'jpeg')
  const wav = fakeAudio('wav', 'example')
  const page = '<!doctype html><html><head><title>Example Domain</title><meta property="og:title" content="Example Domain"></head><body><h1>Example Domain</h1></body></html>'
  const site = http.createServer((req, res) => {
    const [type, body] = /\.(jpe?g|png|webp|gif)$/i.test(req.url ?? '') ? ['image/jpeg', jpeg] : /\.(ogg|mp3|wav)$/i.test(req.url ?? '') ? ['audio/wav', wav] : ['text/html; charset=utf-8', Buffer.from(page)]
    res.writeHead(200, { 'content-type': type, 'content-length': body.length })
    res.end(body)
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  return site
}

/** The example with every https URL sent to the loopback web instead (the path kept). */
const onLoopback = (value: unknown): unknown =>
  typeof value === 'string' ? value.replace(/^https:\/\/[^/]+/, webUrl) : Array.isArray(value) ? value.map(onLoopback) : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, onLoopback(v)])) : value

function operations(): Operation[] {
  return Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })))
}

test.before(async () => {
  standIns = await startStandIns()
  web = await startWeb()
  webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`
  smtp = await startSmtpServer()
  server = await startTestServer({
    env: {
      ...standIns.env,
      PLAZA_FETCH_ALLOW_PRIVATE: '1',
      // Mail to the loopback SMTP server, sent when the test drains the outbox; a contact for the push services.
      ...smtp.env,
      PLAZA_DELIVERY_POLL: '60s',
    },
  })
  document = (await server.request('GET', '/api/openapi.json')).body
})

test.after(async () => {
  await server.close()
  await standIns.close()
  await smtp.close()
  await new Promise((resolve) => web.close(resolve))
})

test('every operation with input publishes an example of each required parameter and body field', () => {
  const missing: string[] = []
  for (const { method, path, operation } of operations()) {
    for (const parameter of operation.parameters ?? []) if (parameter.required && parameter.example === undefined) missing.push(`${method} ${path}: ${parameter.in} ${parameter.name}`)
    const body = operation.requestBody?.content?.['application/json']
    const schema = body?.schema?.$ref ? document.components.schemas[body.schema.$ref.split('/').pop()] : body?.schema
    for (const field of schema?.required ?? []) if (body.example?.[field] === undefined) missing.push(`${method} ${path}: body ${field}`)
  }
  assert.equal(missing, [])
  // What "Try it" used to fill in for a code image (`"fontFamily": "string"`, refused) is now a snippet that renders.
  const codeimage = document.paths['/api/codeimage'].post.requestBody.content['application/json'].example
  assert.ok(codeimage.codeSnippet && !('fontFamily' in codeimage), JSON.stringify(codeimage))
})

/**
 * The order the examples run in: registering and logging in first, then what creates things,
 * reads them, changes them, and what deletes them, the things made last first (a comment before
 * its post); the password last, as changing it ends the other sessions.
 */
function ordered(list: Operation[]): Operation[] {
  // Two-factor login is set up, confirmed, used, given new recovery codes and turned off, in that order; a new
  // verification link is asked for before the last one is used.
  const first: Record<string, number> = {
    authRegister: 0,
    authLogin: 1,
    twoFactorSetup: 1.1,
    twoFactorConfirm: 1.2,
    authLoginTwoFactor: 1.3,
    twoFactorRecoveryCodes: 1.4,
    twoFactorDisable: 1.5,
    authResendVerification: 1.6,
    usersChangePassword: 6,
  }
  const rank = ({ method, operation }: Operation) => first[operation.operationId] ?? ({ POST: 2, GET: 3, PUT: 4, PATCH: 4, DELETE: 5 } as Record<string, number>)[method]
  const at = new Map(list.map((item, i) => [item, i]))
  return [...list].sort((a, b) => rank(a) - rank(b) || (a.method === 'DELETE' ? at.get(b)! - at.get(a)! : at.get(a)! - at.get(b)!))
}

test("every operation's example succeeds as it stands, and its answer is one the document declares", async () => {
  const contract = createOpenApiValidator(document)
  // The story the examples tell needs user 2 and a notification for alice (user 2 follows her); the gateway a premium key (agent).
  const gatewayKey = (await (await server.services.gatewayAccess()).createKey({ name: 'examples', rpm: 1_000_000, premium: true })).key
  const png = await solidImage(64, 48, 'png')
  const register = document.paths['/api/mobile/auth/register'].post.requestBody.content['application/json'].example
  let password = register.password as string
  const login = async (email: string, secret: string) => (await server.request('POST', '/api/mobile/auth/login', { body: { email, password: secret } })).body.data?.token as string
  const failures: string[] = []
  let othersReady = false
  let storedResponse: string | undefined
  // The token of the newest mail of `kind` to `to`, once the outbox is sent.
  const mailedToken = async (kind: 'password/reset' | 'email/verify', to: string) => {
    await server.services.delivery.drain()
    const mail = smtp.received.filter((message) => message.to.includes(to) && message.mail.text!.includes(`/api/mobile/auth/${kind}?token=`)).at(-1)
    return new URL(/https?:\/\/\S+/.exec(mail!.mail.text!)![0]).searchParams.get('token')!
  }
  // Dave's two-factor login: his session from before it was on, its secret, the recovery codes given last.
  const dave = { email: 'dave@example.com', token: '', secret: '', recovery: [] as string[] }
  let pushToken: string | undefined

  /** What replaces the example's placeholders: the secrets a person reads in a mail or an authenticator app. */
  async function secretsOf(operationId: string): Promise<Record<string, unknown>> {
    switch (operationId) {
      case 'authResetPassword':
        // Bob's: a reset logs every session out, and alice's session 1 is for DELETE /auth/sessions/1.
        await server.request('POST', '/api/mobile/auth/password/forgot', { body: { email: 'bob@example.com' } })
        return { token: await mailedToken('password/reset', 'bob@example.com') }
      case 'authVerifyEmail':
        return { token: await mailedToken('email/verify', register.email) }
      case 'twoFactorConfirm':
        return { code: totpCodeAt(dave.secret, new Date()) }
      case 'authLoginTwoFactor': {
        const challenge = (await server.request('POST', '/api/mobile/auth/login', { body: { email: dave.email, password: register.password } })).body.data.challenge_token
        // The confirming code's step is used up; the next step's code is within the drift allowed.
        return { challenge_token: challenge, code: totpCodeAt(dave.secret, new Date(Date.now() + 30_000)) }
      }
      case 'twoFactorRecoveryCodes':
      case 'twoFactorDisable':
        // Each step's code works once: a recovery code instead (an undefined code leaves the body).
        return { code: undefined, recovery_code: dave.recovery[0] }
      default:
        return {}
    }
  }

  for (const { method, path, operation } of ordered(operations())) {
    if (!othersReady && operation.operationId !== 'authRegister') {
      const bob = await server.request('POST', '/api/mobile/auth/register', { body: { username: 'bob', email: 'bob@example.com', password: 'bob password 1' } })
      await server.request('POST', '/api/mobile/auth/register', { body: { username: 'mallory', email: 'mallory@example.com', password: 'mallory password 1' } })
      await server.request('POST', '/api/mobile/user/follow/1', { token: bob.body.data.token })
      // Alice turns private (bob stays her follower); users 4 and 5 (erin, frank) ask to follow her, for approve and deny.
      await server.request('PUT', '/api/mobile/user/update', { token: await login(register.email, password), body: { is_private: true } })
      for (const name of ['erin', 'frank']) {
        const asker = await server.request('POST', '/api/mobile/auth/register', { body: { username: name, email: `${name}@example.com`, password: `${name} password 1` } })
        assert.ok(asker.body.data, JSON.stringify(asker.body))
        await server.request('POST', '/api/mobile/user/follow/1', { token: asker.body.data.token })
      }
      othersReady = true
    }
    // A stored response's id is random: the one the Responses example made stands in for the example's.
    const example = (parameter: any) => (operation.operationId.startsWith('v1ResponsesById') && parameter.name === 'id' && storedResponse ? storedResponse : onLoopback(parameter.example))
    let url = path.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(String(example(operation.parameters.find((p: any) => p.in === 'path' && p.name === name)))))
    const query = new URLSearchParams()
    for (const parameter of operation.parameters ?? []) if (parameter.in === 'query' && parameter.example !== undefined) query.set(parameter.name, String(example(parameter)))
    // The pages a mailed link opens: a live token from a mail (a GET never uses it up).
    if (operation.operationId === 'authPasswordReset') {
      await server.request('POST', '/api/mobile/auth/password/forgot', { body: { email: register.email } })
      query.set('token', await mailedToken('password/reset', register.email))
    }
    if (operation.operationId === 'authEmailVerify') query.set('token', await mailedToken('email/verify', 'bob@example.com'))
    if ([...query].length > 0) url += '?' + query
    const headers: Record<string, string> = {}
    const scheme = Object.keys(operation.security.at(-1) ?? {})[0]
    if (scheme === 'bearerAuth') {
      if (operation.operationId.startsWith('twoFactor')) {
        // Dave's own session, kept: once two-factor login is on, a login answers a challenge.
        if (!dave.token) {
          await server.request('POST', '/api/mobile/auth/register', { body: { username: 'dave', email: dave.email, password: register.password } })
          dave.token = await login(dave.email, register.password)
        }
        headers.authorization = `Bearer ${dave.token}`
      } else if (operation.operationId.startsWith('push') && operation.operationId !== 'pushVapidKey') {
        headers.authorization = `Bearer ${(pushToken ??= await login(register.email, password))}`
      } else {
        // Deleting the account ends it: a user of its own, registered with the example's password, takes that call.
        const email = operation.operationId === 'usersDeleteAccount' ? 'carol@example.com' : register.email
        if (email !== register.email) await server.request('POST', '/api/mobile/auth/register', { body: { username: 'carol', email, password: register.password } })
        headers.authorization = `Bearer ${await login(email, email === register.email ? password : register.password)}`
      }
    }
    if (scheme === 'gatewayKey') headers.authorization = `Bearer ${gatewayKey}`
    let body: string | FormData | undefined
    const json = operation.requestBody?.content?.['application/json']
    if (json?.example !== undefined) {
      body = JSON.stringify({ ...(onLoopback(json.example) as object), ...(await secretsOf(operation.operationId)) })
      headers['content-type'] = 'application/json'
    } else if (operation.requestBody?.content?.['multipart/form-data']) {
      // A file cannot be an example: a picture, or for song recognition a recording.
      const audio = operation.operationId === 'identifyPost' || operation.operationId === 'v1AudioTranscriptions'
      body = new FormData()
      body.append('file', new Blob([new Uint8Array(audio ? fakeAudio('wav', 'example') : png)], { type: audio ? 'audio/wav' : 'image/png' }), audio ? 'song.wav' : 'photo.png')
    } else if (method !== 'GET' && method !== 'DELETE') {
      body = '{}'
      headers['content-type'] = 'application/json'
    }
    const answer = await fetch(server.url + url, { method, headers, body, redirect: 'manual' })
    const type = answer.headers.get('content-type') ?? ''
    // An event stream never ends by itself: its status and type are the answer.
    const text = type.startsWith('text/event-stream') ? (await answer.body?.cancel(), '') : type.includes('json') || type.startsWith('text/') ? await answer.text() : (await answer.arrayBuffer(), '')
    const redirect = Object.keys(operation.responses).includes('302')
    const succeeded = (answer.status >= 200 && answer.status < 300) || (redirect && answer.status === 302)
    if (!succeeded) failures.push(`${method} ${url} (${operation.operationId}) -> ${answer.status}: ${text.slice(0, 300)}`)
    const { problem } = contract.check({ method, path: url, status: answer.status, contentType: type, body: text })
    if (problem) failures.push(problem)
    if (operation.operationId === 'usersChangePassword' && succeeded) password = JSON.parse(body as string).new_password
    if (operation.operationId === 'v1Responses' && succeeded) storedResponse = JSON.parse(text).id
    if (operation.operationId === 'twoFactorSetup' && succeeded) dave.secret = JSON.parse(text).data.secret
    if ((operation.operationId === 'twoFactorConfirm' || operation.operationId === 'twoFactorRecoveryCodes') && succeeded) dave.recovery = JSON.parse(text).data.recovery_codes
  }
  assert.equal(failures, [])
})

test.run()
