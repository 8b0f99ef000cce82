/**
 * The search-backed operations as functions of the provider layer (and, for `/api/online`, the chat
 * gateway): shared by the HTTP handlers and the embedded `plaza util` commands, so the two cannot
 * answer differently.
 */
import { TRPCError } from '@trpc/server'
import type { ChatUsage } from '../../../shared/schemas/chat.js'
import { ONLINE_ALIAS, type ClipsAnswer, type ClipsInput, type IdentifyAnswer, type LensAnswer, type LensInput, type OnlineAnswer, type OnlineInput } from '../../../shared/schemas/searchops.js'
import { HOW_TO_CONFIGURE } from '../../chat/config.js'
import type { ChatGateway } from '../../chat/gateway.js'
import type { ErrorCases } from '../../errors.js'
import { checkPublicUrl } from '../../fetch-guard.js'
import { auddRecognize, type AudioSource } from '../../providers/audd.js'
import { ProviderError } from '../../providers/errors.js'
import { invidiousClips } from '../../providers/invidious.js'
import type { ProviderLayer } from '../../providers/layer.js'
import { searxngSearch } from '../../providers/searxng.js'
import { serpapiLens } from '../../providers/serpapi.js'
import { youtubeClips } from '../../providers/youtube.js'
import { citedSources, onlineMessages } from './prompt.js'

const plural = (n: number, word: string, words = `${word}s`) => `${n} ${n === 1 ? word : words}`

/** The 503 of `/api/online` without a chat provider: it answers with the gateway. */
const ONLINE_NEEDS_GATEWAY = `/api/online answers through the chat gateway, which is not configured. ${HOW_TO_CONFIGURE}`

/** What answering online can answer beyond the gateway's and the search provider's failures. */
export const ONLINE_ERRORS: ErrorCases = { 404: 'The web search found nothing for `q`', 503: 'The chat gateway is not configured (the answer is written by it)' }

export interface OnlineDeps {
  layer: ProviderLayer
  gateway: ChatGateway
  now: () => Date
}

/** What `/api/online` answers, and which chat provider wrote it (for `x-plaza-provider`). */
export interface OnlineOutcome {
  answer: OnlineAnswer
  provider: string
  upstreamRequestId?: string
  usage?: ChatUsage
  /** Nano-dollars, by the gateway's price table. */
  cost: number
}

/** Refuses, before any search is made, what could not be answered: no chat provider, no search provider. */
export function requireOnline(deps: Pick<OnlineDeps, 'layer' | 'gateway'>): void {
  if (!deps.gateway.configured) throw new ProviderError(503, ONLINE_NEEDS_GATEWAY)
  deps.layer.require('search')
}

/** Searches the web for `input.q`, then asks the model to answer from the top results with numbered citations. */
export async function answerOnline(deps: OnlineDeps, input: OnlineInput, signal?: AbortSignal): Promise<OnlineOutcome> {
  requireOnline(deps)
  const model = input.model ?? ONLINE_ALIAS
  const { value: results } = await deps.layer.call('search', (call) => searxngSearch(call, input.q, input.limit), signal)
  if (results.length === 0) throw new TRPCError({ code: 'NOT_FOUND', message: `q: the web search found nothing for "${input.q}"` })
  const sources = results.map((result, index) => ({ n: index + 1, ...result }))
  const result = await deps.gateway.complete({ model, messages: onlineMessages(input.q, sources, deps.now()), params: {} }, signal)
  const answer: OnlineAnswer = { message: result.message, answer: result.answer, sources, cited: citedSources(result.answer, sources.length), model }
  return { answer, provider: result.provider, upstreamRequestId: result.upstreamRequestId, usage: result.usage, cost: result.cost }
}

export async function findClips(layer: ProviderLayer, input: ClipsInput, signal?: AbortSignal): Promise<ClipsAnswer> {
  const { value: clips } = await layer.call('clips', (call) => (call.target.protocol === 'youtube' ? youtubeClips(call, input.q, input.limit) : invidiousClips(call, input.q, input.limit)), signal)
  return { message: clips.length ? `${plural(clips.length, 'clip')} for "${input.q}"` : `No clips found for "${input.q}"`, clips }
}

export interface UrlCheck {
  allowPrivate: boolean
  resolve?: (hostname: string) => Promise<string[]>
}

export async function findLensMatches(layer: ProviderLayer, input: LensInput, check: UrlCheck, signal?: AbortSignal): Promise<LensAnswer> {
  // Nothing is checked (no DNS asked) when no provider could serve it.
  layer.require('lens')
  const url = (await checkPublicUrl(input.url, { field: 'url', ...check })).href
  const { value: matches } = await layer.call('lens', (call) => serpapiLens(call, url, input.limit), signal)
  return { message: matches.length ? `${plural(matches.length, 'match', 'matches')} for the image` : 'No matches found for the image', matches }
}

/** The song in the audio at a URL or in an uploaded file; `field` names the input in refusals. */
export async function identifySong(layer: ProviderLayer, source: AudioSource, check: UrlCheck, signal?: AbortSignal): Promise<IdentifyAnswer> {
  layer.require('audd')
  const field = 'url' in source ? 'url' : 'file'
  const checked: AudioSource = 'url' in source ? { url: (await checkPublicUrl(source.url, { field, ...check })).href } : source
  const { value: result } = await layer.call('audd', (call) => auddRecognize(call, checked, field), signal)
  return { message: result ? `${result.artist} – ${result.title}` : 'No song was recognised', result }
}
