/**
 * `plaza admin keys` and `plaza admin usage` as an operator runs them (the built binary; `npm run
 * build` first), on the data directory of a server that is running; and `plaza serve`'s one
 * warning about an open gateway on a public address.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { KEY_CACHE_MS } from '../../src/server/chat/keys/access.js'
import { hashGatewayKey } from '../../src/server/chat/keys/store.js'
import { runCli, startServe } from '../helpers/cli.js'
import { manualClock, startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'
import { post, USER_HI } from './helpers.js'

interface Ctx {
  fake: FakeUpstream
  server: TestServer
  clock: ReturnType<typeof manualClock>
  dataDir: string
}

const cli = suite<Ctx>('plaza admin keys, plaza admin usage')

cli.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.dataDir = tempDir()
  // Real time: the commands count days from their own clock.
  ctx.clock = manualClock(new Date())
  ctx.server = await startTestServer({ dataDir: ctx.dataDir, clock: ctx.clock.clock, env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_MODEL: 'up' } })
})
cli.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

const chat = (ctx: Ctx, key?: string, body: Record<string, unknown> = {}) =>
  post(`${ctx.server.url}/api/v1/chat/completions`, { messages: USER_HI, ...body }, { headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) } })

cli('keys create prints the key once (alone on stdout, or in --json); a running server requires keys within KEY_CACHE_MS', async (ctx) => {
  assert.is((await chat(ctx)).status, 200, 'open before any key')
  const created = await runCli(['admin', 'keys', 'create', '--name', 'ci', '--models', 'modelg-4o-mini,chaty', '--rpm', '60', '--tpm', '100000', '--budget-tokens', '1000', '--premium', '--json', '--data-dir', ctx.dataDir])
  assert.is(created.code, 0, created.stderr)
  const info = JSON.parse(created.stdout)
  assert.match(info.key, /^sk-plaza-/)
  assert.equal({ ...info, key: undefined, created_at: undefined }, { key: undefined, id: 1, name: 'ci', models: ['modelg-4o-mini', 'chaty'], rpm: 60, tpm: 100000, budget_tokens: 1000, used_tokens: 0, budget_usd: null, used_usd: 0, premium: true, created_at: undefined, revoked_at: null })

  const plain = await runCli(['admin', 'keys', 'create', '--name', 'batch'], { env: { PLAZA_DATA_DIR: ctx.dataDir } })
  assert.is(plain.code, 0, plain.stderr)
  assert.match(plain.stdout, /^sk-plaza-[A-Za-z0-9_-]{43}\n$/)
  assert.is(plain.stderr, '', 'no chatter off a terminal')

  ctx.clock.advance(KEY_CACHE_MS)
  assert.is((await chat(ctx)).status, 401)
  const ok = await chat(ctx, info.key)
  assert.is(ok.status, 200)
  assert.is((await ok.json()).answer, 'Hello there!')
  assert.is((await chat(ctx, plain.stdout.trim(), { model: 'o1-mini' })).status, 200)
  assert.is((await chat(ctx, info.key, { model: 'o1-mini' })).status, 403)
  // plaza util chat against this server sends PLAZA_GATEWAY_KEY.
  const withoutKey = await runCli(['util', 'chat', 'Hi', '--url', ctx.server.url], { env: { PLAZA_DATA_DIR: tempDir() } })
  assert.is(withoutKey.code, 1)
  assert.match(withoutKey.stderr, /requires an API key/)
  const withKey = await runCli(['util', 'chat', 'Hi', '--url', ctx.server.url], { env: { PLAZA_DATA_DIR: tempDir(), PLAZA_GATEWAY_KEY: info.key } })
  assert.is(withKey.code, 0, withKey.stderr)
  assert.is(withKey.stdout, 'Hello there!\n')

  const list = await runCli(['admin', 'keys', 'list', '--data-dir', ctx.dataDir])
  assert.is(list.code, 0, list.stderr)
  assert.match(list.stdout, /^ID\s+NAME\s+STATE\s+RPM\s+TPM\s+TOKENS\s+SPENT\s+PREMIUM\s+CREATED\s+MODELS\n/)
  assert.match(list.stdout, /\n1\s+ci\s+live\s+60\s+100000\s+(0|19|38)\/1000\s+\$0\s+yes\s+\S+ \S+\s+modelg-4o-mini,chaty\n/)
  assert.match(list.stdout, /\n2\s+batch\s+live\s+-\s+-\s+(0|19)\s+\$0\s+no\s+\S+ \S+\s+all$/m)
  const listJson = await runCli(['admin', 'keys', 'list', '--json', '--data-dir', ctx.dataDir])
  for (const output of [list.stdout, listJson.stdout]) {
    for (const key of [info.key, plain.stdout.trim()]) {
      assert.not.ok(output.includes(key) || output.includes(hashGatewayKey(key)), 'no key or hash in a list')
    }
  }
  assert.equal(JSON.parse(listJson.stdout).map((key: { name: string }) => key.name), ['ci', 'batch'])
})

cli('admin usage: per day, key and model once the server has written it; --key and --days filter', async (ctx) => {
  const [ci] = JSON.parse((await runCli(['admin', 'keys', 'list', '--json', '--data-dir', ctx.dataDir])).stdout)
  const created = await runCli(['admin', 'keys', 'create', '--name', 'metered', '--json', '--data-dir', ctx.dataDir])
  const metered = JSON.parse(created.stdout)
  ctx.clock.advance(KEY_CACHE_MS)
  ctx.fake.enqueue(reply({ usage: { input: 3, output: 4 } }), reply({ usage: { input: 5, output: 6 } }))
  assert.is((await chat(ctx, metered.key)).status, 200)
  await (await chat(ctx, metered.key, { model: 'chaty', stream: true })).text()
  await (await ctx.server.services.gatewayAccess()).flush()

  const all = await runCli(['admin', 'usage', '--json', '--data-dir', ctx.dataDir])
  assert.is(all.code, 0, all.stderr)
  const day = new Date().toISOString().slice(0, 10)
  const rows = JSON.parse(all.stdout)
  // ci's two calls of the first test and batch's one (12 + 7 each), metered's two.
  // Every alias goes upstream as PLAZA_LLM_MODEL (`up`), which has no price: no cost (spend.test.ts prices calls).
  const free = { cached_tokens: 0, cost_usd: 0 }
  assert.equal(rows, [
    { key_id: ci.id, day, model: 'modelg-4o-mini', prompt_tokens: 24, completion_tokens: 14, total_tokens: 38, requests: 2, errors: 0, ...free, key_name: 'ci' },
    { key_id: 2, day, model: 'o1-mini', prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, requests: 1, errors: 0, ...free, key_name: 'batch' },
    { key_id: metered.id, day, model: 'chaty', prompt_tokens: 5, completion_tokens: 6, total_tokens: 11, requests: 1, errors: 0, ...free, key_name: 'metered' },
    { key_id: metered.id, day, model: 'modelg-4o-mini', prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, requests: 1, errors: 0, ...free, key_name: 'metered' },
  ])
  const one = await runCli(['admin', 'usage', '--key', 'metered', '--days', '1', '--data-dir', ctx.dataDir])
  assert.is(one.code, 0, one.stderr)
  assert.match(one.stdout, /^DAY\s+KEY\s+MODEL\s+REQUESTS\s+ERRORS\s+PROMPT\s+CACHED\s+COMPLETION\s+TOTAL\s+COST\n/)
  assert.match(one.stdout, new RegExp(`\\n${day}\\s+metered \\(#${metered.id}\\)\\s+chaty\\s+1\\s+0\\s+5\\s+0\\s+6\\s+11\\s+\\$0\\n`))
  assert.match(one.stdout, /\ntotal\s+2\s+0\s+8\s+0\s+10\s+18\s+\$0$/m)
  assert.equal(JSON.parse((await runCli(['admin', 'usage', '--key', String(ci.id), '--json', '--data-dir', ctx.dataDir])).stdout).length, 1)
})

cli('keys revoke by name or id: the server refuses the key within KEY_CACHE_MS; mistakes exit 1 or 2 with one line', async (ctx) => {
  const [ci] = JSON.parse((await runCli(['admin', 'keys', 'list', '--json', '--data-dir', ctx.dataDir])).stdout)
  const revoked = await runCli(['admin', 'keys', 'revoke', 'batch', '--data-dir', ctx.dataDir])
  assert.is(revoked.code, 0, revoked.stderr)
  assert.match(revoked.stdout, /gateway key #2 "batch" is revoked/)
  const byId = await runCli(['admin', 'keys', 'revoke', String(ci.id), '--json', '--data-dir', ctx.dataDir])
  assert.is(JSON.parse(byId.stdout).name, 'ci')
  assert.ok(JSON.parse(byId.stdout).revoked_at)

  const again = await runCli(['admin', 'keys', 'revoke', 'batch', '--data-dir', ctx.dataDir])
  assert.is(again.code, 1)
  assert.match(again.stderr, /already revoked/)
  const unknown = await runCli(['admin', 'keys', 'revoke', 'nobody', '--data-dir', ctx.dataDir])
  assert.is(unknown.code, 1)
  assert.match(unknown.stderr, /no gateway key named "nobody"/)
  const duplicate = await runCli(['admin', 'keys', 'create', '--name', 'metered', '--data-dir', ctx.dataDir])
  assert.is(duplicate.code, 1)
  assert.match(duplicate.stderr, /a live key named "metered" already exists/)
  for (const args of [['keys', 'create', '--name', '42'], ['keys', 'create', '--name', 'x', '--rpm', '0'], ['keys', 'create', '--name', 'x', '--budget-usd', 'lots'], ['keys', 'create'], ['usage', '--days', '0'], ['keys', 'revoke']]) {
    const bad = await runCli(['admin', ...args, '--data-dir', ctx.dataDir])
    assert.is(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`)
    assert.not.match(bad.stderr, /at .*\.js:\d+/, 'no stack trace')
  }
  // The name of a revoked key is free again.
  assert.is((await runCli(['admin', 'keys', 'create', '--name', 'batch', '--data-dir', ctx.dataDir])).code, 0)
  // A money budget, in dollars.
  const costed = await runCli(['admin', 'keys', 'create', '--name', 'costed', '--budget-usd', '2.5', '--json', '--data-dir', ctx.dataDir])
  assert.is(costed.code, 0, costed.stderr)
  assert.equal([JSON.parse(costed.stdout).budget_usd, JSON.parse(costed.stdout).used_usd], [2.5, 0])
  assert.match((await runCli(['admin', 'keys', 'list', '--data-dir', ctx.dataDir])).stdout, /\n\d+\s+costed\s+live\s+-\s+-\s+0\s+\$0\/\$2\.5\s+no/)
})

cli.run()

const warning = suite('plaza serve: an open gateway on a public address')

warning('warned once (by the primary, not per worker) on 0.0.0.0 with the gateway open; not once a key exists', async () => {
  const dataDir = tempDir()
  const env = { PLAZA_LLM_BASE_URL: 'http://127.0.0.1:9/v1', PLAZA_DATA_DIR: dataDir }
  const open = await startServe(['--port', '0', '--host', '0.0.0.0', '--workers', '2'], env)
  open.child.kill('SIGTERM')
  await open.exited
  assert.is(open.output().match(/the chat gateway is open/g)?.length, 1, open.output())
  assert.not.match(open.output(), /at .*\.js:\d+/, 'no stack trace')

  const local = await startServe(['--port', '0', '--workers', '1'], env)
  local.child.kill('SIGTERM')
  await local.exited
  assert.not.match(local.output(), /gateway is open/, 'loopback only: no warning')

  assert.is((await runCli(['admin', 'keys', 'create', '--name', 'k', '--data-dir', dataDir])).code, 0)
  const closed = await startServe(['--port', '0', '--host', '0.0.0.0', '--workers', '1'], env)
  closed.child.kill('SIGTERM')
  await closed.exited
  assert.not.match(closed.output(), /gateway is open/)
})

warning.run()
