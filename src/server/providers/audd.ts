/**
 * AudD's music recognition (`POST https://api.audd.io/`, form fields `api_token`, `url` or `file`,
 * `return`). AudD answers 200 either way: `{status: "success", result: {...} | null}`, or
 * `{status: "error", error: {error_code, error_message}}`, the latter sorted here into the caller's
 * fault (audio it cannot use: 422, no fallback) and the provider's (key, limits: 502 after fallbacks).
 */
import { TRPCError } from '@trpc/server'
import type { SongMatch } from '../../shared/schemas/searchops.js'
import type { ErrorCases } from '../errors.js'
import { UpstreamError } from './errors.js'

/** What the recognition provider can refuse (ErrorCases in errors.ts). */
export const AUDD_ERRORS: ErrorCases = { 422: 'The recognition provider could not use this audio' }
import type { Attempt } from './layer.js'
import { tidy } from './searxng.js'

const ANSWER_LIMIT = 1024 * 1024

/** What AudD is asked to add to a match: links to the streaming services. */
const RETURN = 'apple_music,spotify'

/** AudD's error codes that are about the audio given (a URL it could not fetch, a file it could not decode, too short or long). */
const AUDIO_ERRORS = new Set([300, 400, 500, 600, 700])

export type AudioSource = { url: string } | { file: Buffer; name: string; type: string }

const text = (value: unknown, max = 300): string | null => (typeof value === 'string' && value.trim() ? tidy(value, max) : null)
const link = (value: unknown): string | null => (typeof value === 'string' && /^https?:\/\//i.test(value) ? value.slice(0, 2048) : null)

/** The song AudD recognised, or null when it heard none. `field` names the input in a 422. */
export async function auddRecognize(call: Attempt, source: AudioSource, field: string): Promise<SongMatch | null> {
  const { FormData } = await import('undici')
  const form = new FormData()
  if (call.target.apiKey) form.append('api_token', call.target.apiKey)
  form.append('return', RETURN)
  if ('url' in source) form.append('url', source.url)
  else form.append('file', new Blob([new Uint8Array(source.file)], { type: source.type }), source.name)
  const body = await (await call.request({ method: 'POST', url: `${call.target.baseUrl}/`, headers: { accept: 'application/json', ...call.target.headers }, body: { form } })).json(ANSWER_LIMIT)
  if (!body || typeof body !== 'object') throw new UpstreamError('protocol', `${call.label} answered a malformed recognition answer`)
  if (body.status === 'error') {
    const code = Number(body.error?.error_code)
    const message = text(body.error?.error_message) ?? 'no message'
    if (AUDIO_ERRORS.has(code)) throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: `${field}: the recognition provider could not use this audio (AudD error ${code}: ${message})` })
    throw new UpstreamError('protocol', `${call.label} answered error ${Number.isFinite(code) ? code : '?'}: ${message}`)
  }
  if (body.status !== 'success') throw new UpstreamError('protocol', `${call.label} answered a malformed recognition answer (status ${JSON.stringify(body.status) ?? 'missing'})`)
  const result = body.result
  if (result === null || result === undefined) return null
  if (typeof result !== 'object' || typeof result.artist !== 'string' || typeof result.title !== 'string') throw new UpstreamError('protocol', `${call.label} answered a malformed recognition answer (a result without artist and title)`)
  return {
    artist: tidy(result.artist, 300),
    title: tidy(result.title, 300),
    album: text(result.album),
    release_date: text(result.release_date, 40),
    label: text(result.label),
    timecode: text(result.timecode, 20),
    song_link: link(result.song_link),
    apple_music: link(result.apple_music?.url),
    spotify: link(result.spotify?.external_urls?.spotify),
  }
}
