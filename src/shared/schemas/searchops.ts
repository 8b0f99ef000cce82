/**
 * The search-backed operations (docs/search.md): `GET /api/online`, `/api/clips`, `/api/lens` and
 * `GET|POST /api/identify`: their queries and answers, shared by the server and the CLI.
 */
import { z } from 'zod'

const text = (field: string, max: number) =>
  z
    .string({ error: `${field} is required` })
    .trim()
    .min(1, `${field} must not be empty`)
    .max(max, `${field} is at most ${max} characters`)

/** A query-string number ("5"): whole, within bounds. */
const count = (field: string, min: number, max: number) =>
  z.coerce
    .number({ error: `${field} must be a number` })
    .int(`${field} must be a whole number`)
    .min(min, `${field} must be from ${min} to ${max}`)
    .max(max, `${field} must be from ${min} to ${max}`)

/** An http(s) URL a provider is asked to fetch (the fetch guard's address rules are applied on the server). */
const publicUrl = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .trim()
    .min(1, `${field} is required`)
    .max(2048, `${field} is at most 2048 characters`)
    .regex(/^https?:\/\//i, `${field} must be an http(s) URL`)

/** The gateway alias `/api/online` asks unless `model=` names another served name. */
export const ONLINE_ALIAS = 'online'

export const onlineInput = z.object({
  q: text('q', 500).describe('the question, searched on the web as it is'),
  model: text('model', 256).optional().describe('a chat model name the gateway serves (default: the `online` alias)'),
  limit: count('limit', 1, 10).default(5).describe('how many search results the answer may cite (1 to 10, default 5)'),
})
export type OnlineInput = z.output<typeof onlineInput>

export interface OnlineSource {
  n: number
  title: string
  url: string
  snippet: string
}

export interface OnlineAnswer {
  /** The model's text as it wrote it (a `<think>` block included), as the chat operations' `message`. */
  message: string
  /** The answer without reasoning, citing sources as [1]..[N]. */
  answer: string
  sources: OnlineSource[]
  /** The source numbers the answer cites, in order of first citation. */
  cited: number[]
  model: string
}

export const clipsInput = z.object({
  q: text('q', 200).describe('what to search for'),
  limit: count('limit', 1, 20).default(10).describe('how many clips (1 to 20, default 10)'),
})
export type ClipsInput = z.output<typeof clipsInput>

export interface Clip {
  title: string
  url: string
  thumbnail: string | null
  /** Seconds; null for live streams and when the provider does not say. */
  duration: number | null
  channel: string | null
}

export interface ClipsAnswer {
  message: string
  clips: Clip[]
}

export const lensInput = z.object({
  url: publicUrl('url').describe('the image, a public http(s) URL the provider fetches'),
  limit: count('limit', 1, 50).default(10).describe('how many matches (1 to 50, default 10)'),
})
export type LensInput = z.output<typeof lensInput>

export interface LensMatch {
  title: string
  url: string
  /** The site it was found on (`Wikipedia`, `www.example.com`). */
  source: string | null
  thumbnail: string | null
}

export interface LensAnswer {
  message: string
  matches: LensMatch[]
}

/** `POST /api/identify` takes only its multipart `file`: no query parameters. */
export const identifyFormInput = z.object({})

export const identifyInput = z.object({ url: publicUrl('url').describe('the audio (or a video with sound), a public http(s) URL the provider fetches') })
export type IdentifyInput = z.output<typeof identifyInput>

export interface SongMatch {
  artist: string
  title: string
  album: string | null
  release_date: string | null
  label: string | null
  /** Where in the recording the song was heard (`00:56`). */
  timecode: string | null
  /** AudD's page of the song, with links to the streaming services. */
  song_link: string | null
  apple_music: string | null
  spotify: string | null
}

export interface IdentifyAnswer {
  message: string
  result: SongMatch | null
}
