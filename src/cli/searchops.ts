/**
 * What `plaza util online`, `clips`, `lens` and `identify` share: run the operation embedded (the
 * provider layer, and for `online` the chat gateway, in this process, configured from this
 * environment as `plaza serve` would be) or ask a server (`--url`), with the server's validation.
 */
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import type { ClipsAnswer, IdentifyAnswer, LensAnswer, OnlineAnswer } from '../shared/schemas/searchops.js'
import type { Target } from './client.js'
import { remoteFormData, UsageError } from './client.js'
import { askServer, parse, withLayer } from './providers.js'

const asJson = async <T>(pending: Promise<{ response: Response | import('undici').Response }>): Promise<T> => (await (await pending).response.json()) as T

/** The fetch guard's setting of this environment, for URLs checked here (embedded). */
async function urlCheck() {
  const { parseFetchAllowPrivate } = await import('../server/config.js')
  return { allowPrivate: parseFetchAllowPrivate(process.env.PLAZA_FETCH_ALLOW_PRIVATE) }
}

export async function runOnline(target: Target, input: { q: string; model?: string; limit?: string }): Promise<OnlineAnswer> {
  const { onlineInput } = await import('../shared/schemas/searchops.js')
  const parsed = await parse(onlineInput, input)
  if (target.kind === 'remote') {
    // The server's gateway may require a key, as for `plaza util chat --url`.
    const key = process.env.PLAZA_GATEWAY_KEY?.trim()
    return asJson(askServer(target.url, '/api/online', input, 'application/json', { headers: key ? { authorization: `Bearer ${key}` } : {} }))
  }
  const [{ loadChatConfig }, { createChatGateway }, { answerOnline }] = await Promise.all([import('../server/chat/config.js'), import('../server/chat/gateway.js'), import('../server/catalog/search/service.js')])
  const gateway = createChatGateway(loadChatConfig(process.env))
  try {
    return (await withLayer((layer) => answerOnline({ layer, gateway, now: () => new Date() }, parsed))).answer
  } finally {
    await gateway.close()
  }
}

export async function runClips(target: Target, input: { q: string; limit?: string }): Promise<ClipsAnswer> {
  const { clipsInput } = await import('../shared/schemas/searchops.js')
  const parsed = await parse(clipsInput, input)
  if (target.kind === 'remote') return asJson(askServer(target.url, '/api/clips', input, 'application/json'))
  const { findClips } = await import('../server/catalog/search/service.js')
  return withLayer((layer) => findClips(layer, parsed))
}

export async function runLens(target: Target, input: { url: string; limit?: string }): Promise<LensAnswer> {
  const { lensInput } = await import('../shared/schemas/searchops.js')
  const parsed = await parse(lensInput, input)
  if (target.kind === 'remote') return asJson(askServer(target.url, '/api/lens', input, 'application/json'))
  const { findLensMatches } = await import('../server/catalog/search/service.js')
  const check = await urlCheck()
  return withLayer((layer) => findLensMatches(layer, parsed, check))
}

/** Reads a local recording as the server reads an upload: at most its limit. */
async function readRecording(file: string, max: number): Promise<Buffer> {
  try {
    const info = await stat(file)
    if (info.isDirectory()) throw new UsageError(`cannot read ${file}: it is a directory`)
    if (info.size > max) throw new Error(`${file} is larger than ${max / (1024 * 1024)} MiB`)
    return await readFile(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`cannot read ${file}: no such file`)
    throw error
  }
}

/** A song from audio at a URL (the provider fetches it) or in a local file (sent to the provider). */
export async function runIdentify(target: Target, input: { url?: string; file?: string }): Promise<IdentifyAnswer> {
  if ((input.url === undefined) === (input.file === undefined)) throw new UsageError('give the audio as a URL or as --file PATH (one of them)')
  const [{ identifyInput }, { IDENTIFY_MAX_BYTES, checkAudio }] = await Promise.all([import('../shared/schemas/searchops.js'), import('../server/catalog/search/http.js')])
  if (input.url !== undefined) {
    const parsed = await parse(identifyInput, { url: input.url })
    if (target.kind === 'remote') return asJson(askServer(target.url, '/api/identify', parsed, 'application/json'))
    const { identifySong } = await import('../server/catalog/search/service.js')
    const check = await urlCheck()
    return withLayer((layer) => identifySong(layer, { url: parsed.url }, check))
  }
  const bytes = await readRecording(input.file!, IDENTIFY_MAX_BYTES)
  if (target.kind === 'remote') {
    const form = await remoteFormData()
    form.append('file', new Blob([new Uint8Array(bytes)]), path.basename(input.file!))
    return asJson(askServer(target.url, '/api/identify', {}, 'application/json', { body: form }))
  }
  const [{ identifySong }, check] = await Promise.all([import('../server/catalog/search/service.js'), urlCheck()])
  const audio = await checkAudio(bytes, 'file')
  return withLayer((layer) => identifySong(layer, { file: bytes, name: `recording.${audio.ext}`, type: audio.type }, check))
}

/** `212` → `3:32`, `3723` → `1:02:03`. */
function formatDuration(seconds: number | null): string {
  if (seconds === null) return 'live'
  const h = Math.floor(seconds / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const s = String(seconds % 60).padStart(2, '0')
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`
}

export function formatOnline(answer: OnlineAnswer): string {
  return [answer.answer, '', 'Sources:', ...answer.sources.map((source) => `[${source.n}] ${source.title} — ${source.url}`)].join('\n')
}

export function formatClips(answer: ClipsAnswer): string {
  if (answer.clips.length === 0) return answer.message
  return answer.clips.map((clip) => `${clip.title} (${formatDuration(clip.duration)}${clip.channel ? `, ${clip.channel}` : ''})\n  ${clip.url}`).join('\n')
}

export function formatLens(answer: LensAnswer): string {
  if (answer.matches.length === 0) return answer.message
  return answer.matches.map((match) => `${match.title}${match.source ? ` — ${match.source}` : ''}\n  ${match.url}`).join('\n')
}

export function formatIdentify(answer: IdentifyAnswer): string {
  const song = answer.result
  if (!song) return answer.message
  const details = [song.album, song.release_date].filter(Boolean).join(', ')
  return [`${song.artist} – ${song.title}${details ? ` (${details})` : ''}`, ...[song.song_link, song.spotify, song.apple_music].filter((link): link is string => !!link)].join('\n')
}
