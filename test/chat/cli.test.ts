/** `plaza util chat` as a user runs it (the built binary; `npm run build` first), embedded and remote. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { runCli } from '../helpers/cli.js'
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { json, reply, startFakeUpstream, type FakeUpstream } from './fake-upstream.js'

const cli = suite<{ fake: FakeUpstream; server: TestServer; env: NodeJS.ProcessEnv }>('plaza util chat')

cli.before(async (ctx) => {
  ctx.fake = await startFakeUpstream()
  ctx.env = { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_API_KEY: 'sk-cli-key-0001', PLAZA_LLM_MODEL: 'fake-model', PLAZA_DATA_DIR: tempDir(), PLAZA_URL: '' }
  ctx.server = await startTestServer({ env: { PLAZA_LLM_BASE_URL: `${ctx.fake.url}/v1`, PLAZA_LLM_MODEL: 'served-model' } })
})
cli.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})

cli('embedded: streams the answer to stdout; reasoning stays off a non-terminal stderr', async ({ fake, env }) => {
  fake.enqueue(reply({ pieces: ['<think>Hmm.</think>', 'Hello', ' from the gateway.'] }))
  const result = await runCli(['util', 'chat', 'Say hello', '--system', 'Be brief.', '--max-tokens', '20'], { env })
  assert.is(result.code, 0, result.stderr)
  assert.is(result.stdout, 'Hello from the gateway.\n')
  assert.is(result.stderr, '')
  const upstream = fake.requests.at(-1)!
  assert.is(upstream.headers.authorization, 'Bearer sk-cli-key-0001')
  assert.equal(upstream.body.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }])
  assert.is(upstream.body.max_tokens, 20)
  assert.is(upstream.body.stream, true)
})

cli('reads the prompt from piped stdin; --no-stream --json prints the completion object', async ({ fake, env }) => {
  const result = await runCli(['util', 'chat', '--no-stream', '--json', '--model', 'reasoning-70b'], { env, input: 'What is in this file?\n' })
  assert.is(result.code, 0, result.stderr)
  const body = JSON.parse(result.stdout)
  assert.is(body.object, 'chat.completion')
  assert.is(body.model, 'reasoning-70b')
  assert.is(body.answer, 'Hello there!')
  assert.is(body.reasoning, 'The user greets me.')
  assert.equal(fake.requests.at(-1)!.body.messages, [{ role: 'user', content: 'What is in this file?\n' }])
  assert.not.ok(fake.requests.at(-1)!.body.stream)
})

cli('remote (--url): the server streams over SSE to the CLI', async ({ fake, server, env }) => {
  fake.enqueue(reply({ pieces: ['Remote', ' answer.'] }))
  const result = await runCli(['util', 'chat', 'Hi', '--url', server.url, '--model', 'chaty'], { env: { ...env, PLAZA_LLM_BASE_URL: '' } })
  assert.is(result.code, 0, result.stderr)
  assert.is(result.stdout, 'Remote answer.\n')
  assert.is(fake.requests.at(-1)!.body.model, 'served-model', 'the server, not the CLI, chose the upstream')

  const json_ = await runCli(['util', 'chat', 'Hi', '--url', server.url, '--json'], { env })
  assert.is(json_.code, 0, json_.stderr)
  assert.is(JSON.parse(json_.stdout).answer, 'Hello there!')
})

cli('-m takes any name the gateway serves; plaza util models lists them, embedded and remote, and prints shell completion', async ({ fake, server, env }) => {
  const any = await runCli(['util', 'chat', 'Hi', '-m', 'gpt-4o-mini', '--no-stream'], { env })
  assert.is(any.code, 0, any.stderr)
  assert.is(fake.requests.at(-1)!.body.model, 'gpt-4o-mini', 'a real name goes upstream as asked')
  const embedded = await runCli(['util', 'models'], { env })
  assert.is(embedded.code, 0, embedded.stderr)
  const names = embedded.stdout.trim().split('\n')
  assert.ok(names.includes('modelg-4o-mini') && names.includes('chaty'), 'the gateway\'s own names')
  assert.ok(names.includes('fake-large'), "the provider's own list")
  const remote = await runCli(['util', 'models', '--url', server.url, '--json'], { env })
  assert.is(remote.code, 0, remote.stderr)
  assert.ok(JSON.parse(remote.stdout).some((model: { id: string; owned_by: string }) => model.id === 'fake-small' && model.owned_by === 'env'))
  const zsh = await runCli(['util', 'models', '--completion', 'zsh'], { env })
  assert.match(zsh.stdout, /compdef _plaza_with_models plaza/)
  assert.match(zsh.stdout, /plaza util models/)
  const bash = await runCli(['util', 'models', '--completion', 'bash'], { env })
  assert.match(bash.stdout, /complete -o default -F _plaza_with_models plaza/)
  assert.is((await runCli(['util', 'models', '--completion', 'fish'], { env })).code, 2)
})

cli('failures: one line on stderr, exit 1 (nothing configured, upstream error, a cut stream); usage errors exit 2', async ({ fake, server, env }) => {
  const unconfigured = await runCli(['util', 'chat', 'Hi'], { env: { PLAZA_DATA_DIR: env.PLAZA_DATA_DIR, PLAZA_URL: '', PLAZA_LLM_BASE_URL: '', PLAZA_LLM_API_KEY: '', PLAZA_LLM_MODEL: '', PLAZA_LLM_CONFIG: '' } })
  assert.is(unconfigured.code, 1)
  assert.match(unconfigured.stderr, /No chat provider is configured\. Set PLAZA_LLM_BASE_URL/)
  assert.is(unconfigured.stdout, '')

  fake.enqueue(json(400, { error: { message: 'prompt is too long' } }))
  const remote = await runCli(['util', 'chat', 'Hi', '--url', server.url], { env })
  assert.is(remote.code, 1)
  assert.match(remote.stderr, /answered 400: prompt is too long/)

  fake.enqueue(reply({ pieces: ['Cut', ' here'], cutAfter: { events: 1, how: 'destroy' } }))
  const cut = await runCli(['util', 'chat', 'Hi'], { env })
  assert.is(cut.code, 1)
  assert.is(cut.stdout, 'Cut', 'what arrived was shown')
  assert.match(cut.stderr, /ended the stream before finishing|dropped the connection/)

  const empty = await runCli(['util', 'chat'], { env, input: '   ' })
  assert.is(empty.code, 2)
  assert.match(empty.stderr, /give a PROMPT/)
  const badTemperature = await runCli(['util', 'chat', 'Hi', '--temperature', 'hot'], { env })
  assert.is(badTemperature.code, 2)
})

cli.run()
