/**
 * POST /api/agent end to end: the real server, the real sandbox, and a loopback OpenAI-compatible
 * model that calls the `execute` tool and then answers from what it was given back. Premium keys
 * only; steps capped; upstream failures, timeouts and malformed tool calls end or continue the run
 * cleanly; a client that leaves aborts the model call.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { AgentEvent } from '../../src/shared/schemas/agent.js'
import { callTool, json, startFakeUpstream, type Behaviour, type FakeUpstream } from '../chat/fake-upstream.js'
import { providerFile } from '../chat/helpers.js'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { askAgent, codingModel, typesOf } from './helpers.js'

interface Ctx {
  server: TestServer
  fake: FakeUpstream
  premium: string
  plain: string
}

const agent = suite<Ctx>('agent: POST /api/agent')

/** Providers for the fake: the default model, a slow one with a short upstream timeout; no retries, no cooldown. */
function providers(fake: FakeUpstream): string {
  return providerFile(`
providers:
  fake: { base_url: "${fake.url}/v1" }
models:
  modelg-4o-mini: { provider: fake, model: gpt-test }
  slow: { provider: fake, model: gpt-slow, timeout_ms: 300 }
retry: { max_retries: 0 }
router: { cooldown_ms: 0 }
`)
}

agent.before(async (ctx) => {
  ctx.fake = await startFakeUpstream(codingModel())
  ctx.server = await startTestServer({ env: { PLAZA_LLM_CONFIG: providers(ctx.fake) } })
  const access = await ctx.server.services.gatewayAccess()
  ctx.premium = (await access.createKey({ name: 'premium', premium: true })).key
  ctx.plain = (await access.createKey({ name: 'plain' })).key
})
agent.after(async (ctx) => {
  await ctx.server.close()
  await ctx.fake.close()
})
agent.before.each((ctx) => {
  ctx.fake.requests.length = 0
})

const of = <T extends AgentEvent['type']>(events: AgentEvent[], type: T) => events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type)

agent('the model calls execute, gets the real output back and answers from it', async ({ server, fake, premium }) => {
  const { status, events } = await askAgent(server.url, { prompt: 'What is six times seven? Compute it.' }, premium)
  assert.is(status, 200)
  assert.equal(typesOf(events), ['step', 'tool_call', 'tool_result', 'step', 'answer', 'done'])
  const [call] = of(events, 'tool_call')
  assert.equal({ language: call.language, code: call.code, name: call.name }, { language: 'javascript', code: 'console.log(6*7)', name: 'execute' })
  const [result] = of(events, 'tool_result')
  assert.ok('stdout' in result)
  assert.is(result.stdout, '42\n')
  assert.is(result.exit_code, 0)
  assert.is(of(events, 'answer')[0].content, 'The program printed: 42')
  assert.equal(of(events, 'done')[0], { type: 'done', steps: 2, finish: 'answer', usage: { prompt_tokens: 80, completion_tokens: 17, total_tokens: 97 } })
  assert.is(of(events, 'step')[0].message.content, 'Let me run it.')

  // What the model was sent: the tool, then the real execution's output as the tool's result.
  assert.is(fake.requests.length, 2)
  const first = fake.requests[0].body
  assert.equal(first.tools.map((tool: any) => tool.function.name), ['execute'])
  assert.equal(first.tools[0].function.parameters.properties.language.enum, ['javascript', 'python'])
  assert.is(first.messages[0].role, 'system')
  assert.equal(first.messages[1], { role: 'user', content: 'What is six times seven? Compute it.' })
  const second = fake.requests[1].body.messages
  assert.equal(second.at(-2).tool_calls, [{ id: 'call_2', type: 'function', function: { name: 'execute', arguments: JSON.stringify({ language: 'javascript', code: 'console.log(6*7)' }) } }])
  const toolMessage = second.at(-1)
  assert.is(toolMessage.role, 'tool')
  assert.is(toolMessage.tool_call_id, 'call_2')
  assert.equal(JSON.parse(toolMessage.content), { stdout: '42\n', stderr: '', exit_code: 0, timed_out: false })
})

agent('each model call is counted on the key, as chat calls are', async ({ server, premium }) => {
  const before = await server.request('GET', '/api/v1/usage', { token: premium })
  await askAgent(server.url, { prompt: 'again' }, premium)
  const after = await server.request('GET', '/api/v1/usage', { token: premium })
  assert.is(after.status, 200)
  assert.is(after.body.total.requests - before.body.total.requests, 2)
  assert.is(after.body.total.total_tokens - before.body.total.total_tokens, 97)
  assert.equal(after.body.data.map((row: any) => row.model), ['modelg-4o-mini'])
})

agent('a key\'s budget is checked before every step: a run that crosses it stops at the next one', async ({ server, fake }) => {
  const key = (await (await server.services.gatewayAccess()).createKey({ name: 'small', premium: true, budget_tokens: 30 })).key
  const { events } = await askAgent(server.url, { prompt: 'go' }, key)
  assert.equal(typesOf(events), ['step', 'tool_call', 'tool_result', 'error', 'done'])
  const [error] = of(events, 'error')
  assert.equal([error.step, error.code], [2, 'insufficient_quota'])
  assert.match(error.message, /budget of 30 tokens \(39 used\)/)
  assert.is(fake.requests.length, 1, 'the second step never reached the model')
})

agent('a program that fails is shown to the model with its stderr and exit code', async ({ server, fake, premium }) => {
  fake.enqueue(codingModel('throw new Error("boom")'))
  const { events } = await askAgent(server.url, { prompt: 'fail', language: 'js' }, premium)
  const [result] = of(events, 'tool_result')
  assert.ok('exit_code' in result)
  assert.is(result.exit_code, 1)
  assert.match(result.stderr, /Uncaught Error: boom/)
  const sent = JSON.parse(fake.requests[1].body.messages.at(-1).content)
  assert.is(sent.exit_code, 1)
  assert.match(sent.stderr, /boom/)
  // `language` restricts the tool to that one language.
  assert.equal(fake.requests[0].body.tools[0].function.parameters.properties.language.enum, ['javascript'])
  assert.is(of(events, 'done')[0].finish, 'answer')
})

agent('a caller with messages instead of a prompt continues that conversation', async ({ server, fake, premium }) => {
  const messages = [
    { role: 'user', content: 'Remember 7.' },
    { role: 'assistant', content: 'OK.' },
    { role: 'user', content: 'Multiply it by 6.' },
  ]
  const { events } = await askAgent(server.url, { messages }, premium)
  assert.is(of(events, 'answer')[0].content, 'The program printed: 42')
  assert.equal(fake.requests[0].body.messages.slice(1), messages)
})

agent('`task` (the name decisions §6 gives the field) is the prompt', async ({ server, fake, premium }) => {
  const { events } = await askAgent(server.url, { task: 'Six times seven?' }, premium)
  assert.is(of(events, 'answer')[0].content, 'The program printed: 42')
  assert.equal(fake.requests[0].body.messages[1], { role: 'user', content: 'Six times seven?' })
})

agent('the step cap ends a run that keeps calling the tool with an error event', async ({ server, fake, premium }) => {
  const again: Behaviour = (req, res, body) => callTool({ id: `call_${body.messages.length}`, name: 'execute', arguments: '{"language":"javascript","code":"console.log(1)"}' })(req, res, body)
  fake.enqueue(again, again)
  const { events } = await askAgent(server.url, { prompt: 'loop', maxSteps: 2 }, premium)
  assert.equal(typesOf(events), ['step', 'tool_call', 'tool_result', 'step', 'tool_call', 'tool_result', 'error', 'done'])
  const [error] = of(events, 'error')
  assert.is(error.code, 'max_steps_reached')
  assert.match(error.message, /after 2 steps/)
  assert.equal(of(events, 'done')[0], { type: 'done', steps: 2, finish: 'error', usage: { prompt_tokens: 60, completion_tokens: 18, total_tokens: 78 } })
  assert.is(fake.requests.length, 2, 'no third model call')
})

agent('malformed tool-call arguments: the model is told, as the tool result', async ({ server, fake, premium }) => {
  fake.enqueue(callTool({ id: 'call_bad', name: 'execute', arguments: '{"language": "javascript", "code": "console.log(' }))
  const { events } = await askAgent(server.url, { prompt: 'go' }, premium)
  assert.equal(typesOf(events), ['step', 'tool_call', 'tool_result', 'step', 'answer', 'done'])
  assert.is(of(events, 'step')[0].message.tool_calls![0].function.arguments, '{"language": "javascript", "code": "console.log(', 'the step shows what the model wrote')
  const [badCall] = of(events, 'tool_call')
  assert.is(badCall.code, null)
  assert.is(badCall.arguments, '{"language": "javascript", "code": "console.log(')
  const [badResult] = of(events, 'tool_result')
  assert.ok('error' in badResult)
  assert.match(badResult.error, /not valid JSON/)
  // The model saw the error as the tool's result, and its call with arguments it can read back.
  const seen = fake.requests[1].body.messages
  assert.equal(seen.at(-2).tool_calls[0].function.arguments, '{}')
  assert.match(JSON.parse(seen.at(-1).content).error, /not valid JSON/)
  assert.match(of(events, 'answer')[0].content, /^The tool failed: the arguments are not valid JSON/)
})

agent('a call of another tool or with invalid fields is an error result too', async ({ server, fake, premium }) => {
  fake.enqueue(
    callTool({ id: 'c1', name: 'shell', arguments: '{"cmd":"ls"}' }),
    callTool({ id: 'c2', name: 'execute', arguments: '{"language":"cobolx","code":""}' }),
    callTool({ id: 'c3', name: 'execute', arguments: '{"language":"python","code":"print(1)"}' }),
  )
  const { events } = await askAgent(server.url, { prompt: 'go', language: 'javascript', maxSteps: 3 }, premium)
  const errors = of(events, 'tool_result').map((result) => ('error' in result ? result.error : null))
  assert.match(errors[0]!, /there is no tool "shell"/)
  assert.match(errors[1]!, /language is not one Plaza knows/)
  assert.match(errors[1]!, /code is required/)
  assert.match(errors[2]!, /this run executes javascript only/)
  assert.is(of(events, 'error')[0].code, 'max_steps_reached')
})

agent('an upstream 5xx ends the run with an error event', async ({ server, fake, premium }) => {
  fake.enqueue(json(500, { error: { message: 'the model is on fire' } }))
  const { status, events } = await askAgent(server.url, { prompt: 'go' }, premium)
  assert.is(status, 200)
  assert.equal(typesOf(events), ['error', 'done'])
  const [error] = of(events, 'error')
  assert.is(error.code, 'upstream_error')
  assert.match(error.message, /on fire/)
  assert.equal(of(events, 'done')[0], { type: 'done', steps: 1, finish: 'error', usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } })
})

agent('an upstream 5xx after a tool call ends the run there', async ({ server, fake, premium }) => {
  fake.enqueue(codingModel(), json(503, { error: { message: 'overloaded' } }))
  const { events } = await askAgent(server.url, { prompt: 'go' }, premium)
  assert.equal(typesOf(events), ['step', 'tool_call', 'tool_result', 'error', 'done'])
  assert.is(of(events, 'error')[0].step, 2)
})

agent('an upstream that does not answer in time is an upstream_timeout error event', async ({ server, fake, premium }) => {
  fake.enqueue(() => {})
  const { events } = await askAgent(server.url, { prompt: 'go', model: 'slow' }, premium)
  assert.equal(typesOf(events), ['error', 'done'])
  assert.is(of(events, 'error')[0].code, 'upstream_timeout')
  await fake.requests[0].aborted
})

agent('a client that goes away aborts the model call', async ({ server, fake, premium }) => {
  let arrived!: () => void
  const reached = new Promise<void>((resolve) => (arrived = resolve))
  fake.enqueue(() => arrived())
  const controller = new AbortController()
  const response = await fetch(`${server.url}/api/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${premium}` },
    body: JSON.stringify({ prompt: 'go' }),
    signal: controller.signal,
  })
  assert.is(response.status, 200)
  assert.match(response.headers.get('content-type')!, /^text\/event-stream/)
  await reached
  controller.abort()
  await fake.requests[0].aborted
})

agent('premium keys only: no key 403, a plain key 403, an unknown key 401', async ({ server, fake, plain }) => {
  const none = await askAgent(server.url, { prompt: 'go' })
  assert.is(none.status, 403)
  assert.is(none.body.status, 'error')
  assert.match(none.body.message, /premium gateway keys/)
  assert.match(none.body.message, /plaza admin keys create --premium/)
  const notPremium = await askAgent(server.url, { prompt: 'go' }, plain)
  assert.is(notPremium.status, 403)
  assert.match(notPremium.body.message, /premium/)
  const unknown = await askAgent(server.url, { prompt: 'go' }, 'sk-plaza-not-a-key')
  assert.is(unknown.status, 401)
  assert.match(unknown.body.message, /not a key of this gateway/)
  assert.is(fake.requests.length, 0, 'no model was called')
})

agent('bad input is a 400 naming the field; an unknown model a 404; nothing is called', async ({ server, fake, premium }) => {
  const cases: Array<[unknown, RegExp]> = [
    [{}, /either prompt \(or task\) or messages/],
    [{ prompt: 'a', messages: [{ role: 'user', content: 'b' }] }, /either prompt \(or task\) or messages/],
    [{ prompt: 'a', task: 'b' }, /either prompt \(or task\) or messages/],
    [{ prompt: '   ' }, /prompt must not be empty/],
    [{ prompt: 'a', maxSteps: 17 }, /maxSteps must be from 1 to 16/],
    [{ prompt: 'a', maxSteps: 0 }, /maxSteps must be from 1 to 16/],
    [{ prompt: 'a', language: 'klingon' }, /language is not one Plaza knows/],
    [{ messages: 'hi' }, /messages must be an array/],
    [[1, 2], /JSON object/],
  ]
  for (const [body, message] of cases) {
    const answer = await askAgent(server.url, body, premium)
    assert.is(answer.status, 400, JSON.stringify(body))
    assert.match(answer.body.message, message)
  }
  const unknown = await askAgent(server.url, { prompt: 'a', model: 'no-such-model' }, premium)
  assert.is(unknown.status, 404)
  assert.match(unknown.body.message, /"no-such-model" is not served here/)
  assert.is(fake.requests.length, 0)
})

agent.run()

const limits = suite<{ fake: FakeUpstream }>('agent: an open gateway, a model allow-list and the wall time')

limits.before(async (ctx) => {
  ctx.fake = await startFakeUpstream(codingModel())
})
limits.after(async (ctx) => {
  await ctx.fake.close()
})

limits('an open gateway has no premium key: 403 with or without a token; the run stops at its wall time', async ({ fake }) => {
  const server = await startTestServer({ env: { PLAZA_LLM_CONFIG: providers(fake), PLAZA_AGENT_TIMEOUT_MS: '300' } })
  try {
    assert.is((await askAgent(server.url, { prompt: 'go' })).status, 403)
    const withToken = await askAgent(server.url, { prompt: 'go' }, 'sk-plaza-anything')
    assert.is(withToken.status, 403)
    assert.match(withToken.body.message, /premium/)

    const access = await server.services.gatewayAccess()
    const key = (await access.createKey({ name: 'p', premium: true, models: ['modelg-4o-mini'] })).key
    const notAllowed = await askAgent(server.url, { prompt: 'go', model: 'slow' }, key)
    assert.is(notAllowed.status, 403)
    assert.match(notAllowed.body.message, /may not use the model "slow"/)

    // The model never answers; the upstream's own timeout (5 minutes here) is far off, the run's 300 ms is not.
    fake.enqueue(() => {})
    const { events } = await askAgent(server.url, { prompt: 'go' }, key)
    assert.equal(typesOf(events), ['error', 'done'])
    assert.is(of(events, 'error')[0].code, 'timeout')
    await fake.requests.at(-1)!.aborted
  } finally {
    await server.close()
  }
})

limits('a quiet stream gets keep-alive comments while the model thinks', async ({ fake }) => {
  const server = await startTestServer({ env: { PLAZA_LLM_CONFIG: providers(fake), PLAZA_STREAM_HEARTBEAT: '50ms' } })
  try {
    const key = (await (await server.services.gatewayAccess()).createKey({ name: 'p', premium: true })).key
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    fake.enqueue(async (req, res, body) => {
      await released
      await codingModel()(req, res, body)
    })
    const response = await fetch(`${server.url}/api/agent`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ prompt: 'go' }) })
    let text = ''
    const decoder = new TextDecoder()
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true })
      if (text.includes(': keep-alive\n\n')) release()
    }
    assert.ok(text.startsWith(': keep-alive\n\n'), 'the comment came before the first step')
    assert.match(text, /event: answer\ndata: \{"step":2,"content":"The program printed: 42"/)
    assert.match(text, /event: done\n/)
  } finally {
    await server.close()
  }
})

limits('over an Anthropic upstream: the tool goes up as Anthropic\'s, the result comes back as a tool_result block', async ({ fake }) => {
  const server = await startTestServer({ env: { PLAZA_LLM_BASE_URL: fake.url, PLAZA_LLM_PROVIDER: 'anthropic', PLAZA_LLM_MODEL: 'claude-test' } })
  try {
    const key = (await (await server.services.gatewayAccess()).createKey({ name: 'p', premium: true })).key
    const { events } = await askAgent(server.url, { prompt: 'six times seven' }, key)
    assert.equal(typesOf(events), ['step', 'tool_call', 'tool_result', 'step', 'answer', 'done'])
    assert.is(of(events, 'answer')[0].content, 'The program printed: 42')
    const [first, second] = fake.requests.slice(-2).map((request) => request.body)
    assert.is(first.tools[0].name, 'execute')
    assert.equal(first.tools[0].input_schema.required, ['language', 'code'])
    assert.match(first.system, /coding agent/)
    const turn = second.messages.at(-1)
    assert.is(turn.role, 'user')
    const block = turn.content.find((item: any) => item.type === 'tool_result')
    assert.equal(JSON.parse(block.content), { stdout: '42\n', stderr: '', exit_code: 0, timed_out: false })
    assert.equal(second.messages.at(-2).content.at(-1), { type: 'tool_use', id: 'call_1', name: 'execute', input: { language: 'javascript', code: 'console.log(6*7)' } })
  } finally {
    await server.close()
  }
})

limits.run()
