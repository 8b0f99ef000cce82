/**
 * OpenAI's embeddings (`POST /v1/embeddings`) and moderations (`POST /v1/moderations`): passed
 * through to the OpenAI-compatible provider serving the model, with its own model name, through
 * the gateway's one life (keys, budgets, retries, fallbacks, prices, usage). Anthropic has neither
 * API: a model only Anthropic providers serve is a 400.
 */
import { embeddingsInput, moderationsInput } from '../../../shared/schemas/gateway-apis.js'
import type { ChatUsage } from '../../../shared/schemas/chat.js'
import { readJson, sendJson } from '../../http.js'
import { gatewayHandler, upstreamHeaders, type CallContext, type CallResult } from '../call.js'
import type { Target } from '../config.js'
import { openaiHeaders } from '../providers/openai.js'

/** 2048 inputs of a few thousand tokens each. */
const EMBEDDINGS_BODY_LIMIT = 16 * 1024 * 1024
/** 2048 vectors of 3072 floats, as JSON text. */
const EMBEDDINGS_ANSWER_LIMIT = 256 * 1024 * 1024
const MODERATIONS_BODY_LIMIT = 4 * 1024 * 1024
const MODERATIONS_ANSWER_LIMIT = 16 * 1024 * 1024

export const openaiCompatible = (target: Target) => target.provider.type === 'openai'

/** One JSON call to `{base}/{path}` of the OpenAI-compatible provider serving `model`, answered as the provider answered (its `model` the one asked for). */
async function passJson(context: CallContext, model: string, path: string, body: Record<string, unknown>, answerLimit: number, what: string): Promise<CallResult> {
  const { gateway, signal, headers, exchange } = context
  const { value, target } = await gateway.call(
    model,
    signal,
    async (attempt) => {
      const provider = attempt.target.provider
      const response = await attempt.request({ url: `${provider.baseUrl}/${path}`, headers: openaiHeaders(provider), body: { json: { ...body, model: attempt.target.model } } })
      return { body: await response.json(answerLimit), requestId: response.requestId }
    },
    { accepts: openaiCompatible, refusal: `The model "${model}" is served by an Anthropic provider here, which has no ${what} API: name a model of an OpenAI-compatible provider.` },
  )
  const answer = value.body && typeof value.body === 'object' ? { ...value.body, ...('model' in value.body ? { model } : {}) } : value.body
  const usage = usageOf(value.body?.usage)
  return { usage, cost: gateway.cost(target, usage), failed: false, respond: () => sendJson(exchange.res, 200, answer, { ...headers, ...upstreamHeaders(target.provider.name, value.requestId) }) }
}

/** Embeddings count prompt tokens only. */
function usageOf(raw: any): ChatUsage | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  const prompt = Number.isFinite(Number(raw.prompt_tokens)) ? Math.max(0, Math.floor(Number(raw.prompt_tokens))) : 0
  const total = Number.isFinite(Number(raw.total_tokens)) ? Math.max(0, Math.floor(Number(raw.total_tokens))) : prompt
  return { prompt_tokens: prompt, completion_tokens: Math.max(0, total - prompt), total_tokens: total }
}

/** POST /v1/embeddings */
export const handleEmbeddings = gatewayHandler(async ({ req }) => {
  const input = embeddingsInput.parse(await readJson(req, EMBEDDINGS_BODY_LIMIT))
  return { model: input.model, run: (context) => passJson(context, input.model, 'embeddings', input, EMBEDDINGS_ANSWER_LIMIT, 'embeddings') }
}, 'openai')

/** POST /v1/moderations */
export const handleModerations = gatewayHandler(async ({ req }) => {
  const input = moderationsInput.parse(await readJson(req, MODERATIONS_BODY_LIMIT))
  return { model: input.model, run: (context) => passJson(context, input.model, 'moderations', input, MODERATIONS_ANSWER_LIMIT, 'moderations') }
}, 'openai')
