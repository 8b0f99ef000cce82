/** `plaza util agent` as a user runs it (the built binary; `npm run build` first), embedded and remote. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { json, startFakeUpstream, type FakeUpstream } from '../chat/fake-upstream.js'
import { providerFile } from '../chat/helpers.js'
import { runCli } from '../helpers/cli.js'
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { codingModel } from './helpers.js'

interface Ctx {
  fake: FakeUpstream
  server: TestServer
  env: NodeJS.ProcessEnv
  premium: string
  plain: string
}

const cli = suite<Ctx>('plaza util agent')

cli.before(async (ctx) => {
  ctx.fake = await startFakeUpstream(codingModel())
  ctx.env = { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_MODEL: 'fake-model', PLAZA_DATA_DIR: tempDir(), PLAZA_URL: '' }
  ctx.server = await startTestServer({ env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_MODEL: 'served-model' } })
  const access = await ctx.server.services.gatewayAccess()
  ctx.premium = (await access.createKey({ name: 'premium', premium: true })).key
  ctx.plain = (await access.createKey({ name: 'plain' })).key
})
cli.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

cli('embedded: prints the steps as plain lines, the program and its real output, then the answer', async ({ fake, env }) => {
  const result = await runCli(['util', 'agent', 'What is six times seven?', '--max-steps', '3'], { env })
  assert.is(result.code, 0, result.stderr)
  const lines = result.stdout.split('\n')
  assert.is(lines[0], '[step 1] Let me run it.')
  assert.is(lines[1], '[step 1] run javascript')
  assert.is(lines[2], '    console.log(6*7)')
  assert.match(lines[3], /^\[step 1\] exit 0 after \d+ ms$/)
  assert.is(lines[4], '    42')
  assert.equal(lines.slice(5), ['[answer]', 'The program printed: 42', ''])
  assert.is(fake.requests.at(-1)!.body.model, 'fake-model')
})

cli('--json prints every event as a JSON line; the prompt may come from stdin', async ({ env }) => {
  const result = await runCli(['util', 'agent', '--json', '--language', 'js'], { env, input: 'Compute 6*7\n' })
  assert.is(result.code, 0, result.stderr)
  const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line))
  assert.equal(events.map((event) => event.type), ['step', 'tool_call', 'tool_result', 'step', 'answer', 'done'])
  assert.is(events[2].stdout, '42\n')
  assert.is(events[5].finish, 'answer')
})

cli('remote (--url): a premium key in PLAZA_GATEWAY_KEY streams the server\'s run', async ({ fake, server, env, premium }) => {
  const result = await runCli(['util', 'agent', 'Six times seven?', '--url', server.url, '--json'], { env: { ...env, PLAZA_LLM_BASE_URL: '', PLAZA_GATEWAY_KEY: premium } })
  assert.is(result.code, 0, result.stderr)
  const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line))
  assert.equal(events.map((event) => event.type), ['step', 'tool_call', 'tool_result', 'step', 'answer', 'done'])
  assert.is(events[4].content, 'The program printed: 42')
  assert.is(fake.requests.at(-1)!.body.model, 'served-model', 'the server, not the CLI, chose the upstream')
})

cli('remote refusals: no key and a plain key are one line on stderr, exit 1', async ({ server, env, plain }) => {
  const none = await runCli(['util', 'agent', 'Hi', '--url', server.url], { env })
  assert.is(none.code, 1)
  assert.match(none.stderr, /^Error: POST \/api\/agent is reserved to premium gateway keys.*\(set PLAZA_GATEWAY_KEY\)\n$/)
  const notPremium = await runCli(['util', 'agent', 'Hi', '--url', server.url], { env: { ...env, PLAZA_GATEWAY_KEY: plain } })
  assert.is(notPremium.code, 1)
  assert.match(notPremium.stderr, /premium/)
  assert.is(notPremium.stdout, '')
})

cli('an error event exits 1 with its message; the steps before it stay on stdout', async ({ fake, env }) => {
  fake.enqueue(codingModel(), json(500, { error: { message: 'the model is on fire' } }))
  // No retries, so that the 500 is the model's last word.
  const file = providerFile(`
providers:
  fake: { base_url: "${fake.url}/v1" }
models:
  default: { provider: fake, model: fake-model }
retry: { max_retries: 0 }
`)
  const result = await runCli(['util', 'agent', 'go'], { env: { ...env, PLAZA_LLM_BASE_URL: '', PLAZA_LLM_MODEL: '', PLAZA_LLM_CONFIG: file } })
  assert.is(result.code, 1)
  assert.match(result.stdout, /^\[step 1\] run javascript/m)
  assert.match(result.stderr, /on fire/)
  assert.is(result.stderr.split('\n').length, 2, 'one line')
})

cli('usage errors exit 2: no prompt, a bad --max-steps, an unknown language', async ({ env }) => {
  const none = await runCli(['util', 'agent'], { env })
  assert.is(none.code, 2)
  assert.match(none.stderr, /give a PROMPT/)
  const steps = await runCli(['util', 'agent', 'x', '--max-steps', '17'], { env })
  assert.is(steps.code, 2)
  const language = await runCli(['util', 'agent', 'x', '--language', 'klingon'], { env })
  assert.is(language.code, 2)
  assert.match(language.stderr, /language is not one Plaza knows/)
})

cli.run()
