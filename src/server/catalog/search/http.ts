/**
 * The search-backed operations' handlers (docs/search.md): `GET /api/online` (web search, then the
 * chat gateway answers with numbered sources; behind the gateway's keys like every gateway call),
 * `GET /api/clips`, `GET /api/lens`, and `GET|POST /api/identify` (a URL, or a multipart `file`
 * sniffed as audio).
 */
import { TRPCError } from '@trpc/server'
import { clipsInput, identifyInput, lensInput, ONLINE_ALIAS, onlineInput } from '../../../shared/schemas/searchops.js'
import { ClientAbortError } from '../../chat/errors.js'
import { authorizeGatewayCall, sendChatError } from '../../chat/http.js'
import type { GatewayPass } from '../../chat/keys/access.js'
import type { ErrorCases } from '../../errors.js'
import { closedSignal, sendJson } from '../../http.js'
import { providerLayerOf } from '../../providers/layer.js'
import type { Exchange } from '../../rest/adapter.js'
import { discardBody, readFormFile } from '../../rest/uploads.js'
import { enforceRateLimit } from '../../trpc.js'
import { MiB } from '../../uploads/pipeline.js'
import { answerOnline, findClips, findLensMatches, identifySong, requireOnline, type UrlCheck } from './service.js'

/** What checking an uploaded recording (checkAudio) can answer. */
export const AUDIO_FILE_ERRORS: ErrorCases = { 400: 'The file is empty', 415: 'The file is not audio (or a video with sound)' }

/** AudD takes files up to about 10 MB; a song is recognised from a few seconds of it. */
export const IDENTIFY_MAX_BYTES = 10 * MiB

const limit = (exchange: Exchange) => enforceRateLimit(exchange.ctx, 'default', `ip:${exchange.ctx.clientAddress}`)
const urlCheck = (exchange: Exchange): UrlCheck => ({ allowPrivate: exchange.ctx.services.config.fetchAllowPrivate })

/** `GET /api/online?q=&model=&limit=`: counted against the caller's gateway key like the chat operations, and answered in the envelope on failure. */
export async function handleOnline(exchange: Exchange): Promise<void> {
  const { ctx, res } = exchange
  let admitted: { pass: GatewayPass; model: string } | undefined
  try {
    const pass = await authorizeGatewayCall(ctx)
    const input = onlineInput.parse(exchange.query)
    const model = input.model ?? ONLINE_ALIAS
    const deps = { layer: await providerLayerOf(ctx.services), gateway: await ctx.services.chat(), now: ctx.services.clock }
    requireOnline(deps)
    await pass.admit(model)
    admitted = { pass, model }
    const outcome = await answerOnline(deps, input, closedSignal(res))
    admitted = undefined
    pass.settle(model, { usage: outcome.usage, cost: outcome.cost, failed: false })
    sendJson(res, 200, outcome.answer, { 'x-plaza-provider': outcome.provider, ...(outcome.upstreamRequestId ? { 'x-upstream-request-id': outcome.upstreamRequestId } : {}) })
  } catch (error) {
    admitted?.pass.settle(admitted.model, { failed: !(error instanceof ClientAbortError) })
    if (error instanceof ClientAbortError) return void res.destroy()
    sendChatError(exchange, 'envelope', error)
  }
}

export async function handleClips(exchange: Exchange): Promise<void> {
  await limit(exchange)
  const input = clipsInput.parse(exchange.query)
  sendJson(exchange.res, 200, await findClips(await providerLayerOf(exchange.ctx.services), input, closedSignal(exchange.res)))
}

export async function handleLens(exchange: Exchange): Promise<void> {
  await limit(exchange)
  const input = lensInput.parse(exchange.query)
  sendJson(exchange.res, 200, await findLensMatches(await providerLayerOf(exchange.ctx.services), input, urlCheck(exchange), closedSignal(exchange.res)))
}

export async function handleIdentify(exchange: Exchange): Promise<void> {
  await limit(exchange)
  const input = identifyInput.parse(exchange.query)
  sendJson(exchange.res, 200, await identifySong(await providerLayerOf(exchange.ctx.services), { url: input.url }, urlCheck(exchange), closedSignal(exchange.res)))
}

/** An uploaded recording: its bytes sniffed (never its name or declared type) as audio, or a video with sound. */
export async function checkAudio(bytes: Buffer, field: string): Promise<{ type: string; ext: string }> {
  if (bytes.length === 0) throw new TRPCError({ code: 'BAD_REQUEST', message: `${field}: the file is empty` })
  const { fileTypeFromBuffer } = await import('file-type')
  const type = await fileTypeFromBuffer(bytes.subarray(0, 4100))
  if (type && (type.mime.startsWith('audio/') || ['video/mp4', 'video/webm', 'video/quicktime', 'video/matroska', 'video/x-matroska'].includes(type.mime))) return { type: type.mime, ext: type.ext }
  throw new TRPCError({
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: `${field}: not an audio file (MP3, WAV, OGG, FLAC, M4A, AAC, Opus, or a video with sound); ${type ? `this file is ${type.mime}` : 'its type was not recognised'}`,
  })
}

export async function handleIdentifyForm(exchange: Exchange): Promise<void> {
  await limit(exchange)
  const layer = await providerLayerOf(exchange.ctx.services)
  // Nothing is read when no provider could serve it: the upload is dropped unread.
  try {
    layer.require('audd')
  } catch (error) {
    discardBody(exchange.req)
    throw error
  }
  const bytes = await readFormFile(exchange.req, IDENTIFY_MAX_BYTES)
  const audio = await checkAudio(bytes, 'file')
  sendJson(exchange.res, 200, await identifySong(layer, { file: bytes, name: `recording.${audio.ext}`, type: audio.type }, urlCheck(exchange), closedSignal(exchange.res)))
}
