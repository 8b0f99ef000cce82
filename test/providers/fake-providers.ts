/**
 * A real HTTP server on loopback that speaks the provider layer's protocols, as the providers
 * would: Open-Meteo's geocoding and forecast APIs, OpenAI's images API (generations and edits),
 * AUTOMATIC1111's txt2img, img2img and extra-single-image, a Hugging Face style hosted-inference
 * endpoint (JSON in, image bytes out), remove.bg's `/v1.0/removebg` and rembg's `/api/remove`.
 * Each request takes the next scripted behaviour, or the protocol's default answer when the script
 * is empty; every request is recorded for assertions.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import { hang, json, startScriptedServer } from '../helpers/scripted-server.js'

export { hang, json }
import sharp from 'sharp'

export interface RecordedRequest {
  method: string
  path: string
  query: URLSearchParams
  headers: http.IncomingHttpHeaders
  /** Parsed JSON, the raw bytes of anything else. */
  body: any
}

export type Behaviour = (req: IncomingMessage, res: ServerResponse, body: any) => void | Promise<void>

export interface FakeProviders {
  url: string
  requests: RecordedRequest[]
  enqueue(...behaviours: Behaviour[]): void
  close(): Promise<void>
}

export const bytes =
  (status: number, body: Buffer, type: string): Behaviour =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': type, 'content-length': body.length })
    res.end(body)
  }

/** A solid image of `colour` (RGB), `width` × `height`, as PNG. */
export function solidPng(colour: [number, number, number], width = 64, height = 48, alpha?: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: alpha === undefined ? 3 : 4, background: { r: colour[0], g: colour[1], b: colour[2], alpha: (alpha ?? 255) / 255 } } })
    .png()
    .toBuffer()
}

/** The colour the default image answers take from the prompt, so a test can tell which request made which image. */
export function colourOf(prompt: string): [number, number, number] {
  let hash = 0
  for (const char of String(prompt)) hash = (hash * 31 + char.charCodeAt(0)) >>> 0
  return [hash & 0xff, (hash >> 8) & 0xff, (hash >> 16) & 0xff]
}

export const PLACES: Record<string, { name: string; country: string; latitude: number; longitude: number; timezone: string }> = {
  berlin: { name: 'Berlin', country: 'Germany', latitude: 52.52437, longitude: 13.41053, timezone: 'Europe/Berlin' },
  reykjavik: { name: 'Reykjavík', country: 'Iceland', latitude: 64.13548, longitude: -21.89541, timezone: 'Atlantic/Reykjavik' },
}

/** A forecast whose numbers derive from the query, so units and coordinates can be checked. */
function forecast(query: URLSearchParams) {
  const imperial = query.get('temperature_unit') === 'fahrenheit'
  const t = (c: number) => (imperial ? Math.round((c * 9) / 5 + 32) : c)
  const days = Array.from({ length: Number(query.get('forecast_days') ?? 7) }, (_, i) => `2026-11-${String(23 + i).padStart(2, '0')}`)
  const codes = [0, 3, 61, 95, 71, 45, 2]
  return {
    latitude: Number(query.get('latitude')),
    longitude: Number(query.get('longitude')),
    timezone: query.get('timezone') === 'auto' ? 'GMT' : query.get('timezone'),
    current: { time: '2026-11-23T14:00', interval: 900, temperature_2m: t(4), relative_humidity_2m: 81, apparent_temperature: t(1), weather_code: 63, wind_speed_10m: imperial ? 9.3 : 15, wind_direction_10m: 250 },
    daily: {
      time: days,
      weather_code: days.map((_, i) => codes[i % codes.length]),
      temperature_2m_max: days.map((_, i) => t(6 + i)),
      temperature_2m_min: days.map((_, i) => t(-1 + i)),
      precipitation_sum: days.map((_, i) => (i === 2 ? (imperial ? 0.2 : 5.1) : 0)),
      sunrise: days.map((day) => `${day}T07:41`),
      sunset: days.map((day) => `${day}T16:02`),
    },
  }
}

/** The first bytes of each audio format (what Plaza's speech providers check), for fake audio. */
export const AUDIO_MAGIC: Record<string, Buffer> = {
  mp3: Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'),
  wav: Buffer.from('RIFF\x24\x00\x00\x00WAVE', 'latin1'),
  ogg: Buffer.from('OggS\x00\x02', 'latin1'),
  flac: Buffer.from('fLaC', 'latin1'),
  aac: Buffer.from([0xff, 0xf1, 0x50, 0x80]),
}

/** Fake audio: the format's magic, then a text naming what was asked, so a test can tell which request made it. */
export const fakeAudio = (format: string, said: string) => Buffer.concat([AUDIO_MAGIC[format === 'opus' || format === 'ogg_vorbis' ? 'ogg' : format], Buffer.from(`|${said}`)])

/** Reads a multipart body's first file part (enough for the protocols here). */
function multipartFile(body: Buffer, type: string): { field: string; bytes: Buffer } | null {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(type)
  if (!boundary) return null
  const marker = Buffer.from(`--${boundary[1] ?? boundary[2]}`)
  let start = body.indexOf(marker)
  while (start >= 0) {
    const next = body.indexOf(marker, start + marker.length)
    if (next < 0) break
    const part = body.subarray(start + marker.length + 2, next - 2)
    const split = part.indexOf('\r\n\r\n')
    const head = part.subarray(0, split).toString()
    const field = /name="([^"]+)"/.exec(head)?.[1] ?? ''
    if (/filename=/.test(head)) return { field, bytes: part.subarray(split + 4) }
    start = next
  }
  return null
}

/** The default answer of each protocol. */
async function answer(req: IncomingMessage, res: ServerResponse, body: any, query: URLSearchParams): Promise<void> {
  const path = (req.url ?? '').split('?')[0]
  if (path.endsWith('/v1/search')) {
    const name = String(query.get('name')).toLowerCase()
    const place = Object.hasOwn(PLACES, name) ? PLACES[name] : undefined
    return json(200, place ? { results: [{ id: 1, ...place, admin1: 'Somewhere' }], generationtime_ms: 0.5 } : { generationtime_ms: 0.5 })(req, res)
  }
  if (path.endsWith('/v1/forecast')) return json(200, forecast(query))(req, res)
  if (path.endsWith('/images/generations')) {
    const images = await Promise.all(Array.from({ length: body.n ?? 1 }, async () => (await solidPng(colourOf(body.prompt))).toString('base64')))
    return json(200, { created: 1, data: images.map((b64) => ({ b64_json: b64, revised_prompt: `revised: ${body.prompt}` })) })(req, res)
  }
  if (path.endsWith('/images/edits')) {
    const file = multipartFile(body, String(req.headers['content-type']))
    const { data, info } = await sharp(file!.bytes).raw().toBuffer({ resolveWithObject: true })
    for (let i = 0; i < data.length; i++) data[i] = 255 - data[i]
    const inverted = await sharp(data, { raw: info }).png().toBuffer()
    return json(200, { created: 1, data: [{ b64_json: inverted.toString('base64') }] })(req, res)
  }
  if (path.endsWith('/sdapi/v1/txt2img')) {
    const png = await solidPng(colourOf(body.prompt), body.width ?? 64, body.height ?? 48)
    return json(200, { images: Array.from({ length: body.batch_size ?? 1 }, () => png.toString('base64')), parameters: body, info: '{}' })(req, res)
  }
  if (path.endsWith('/sdapi/v1/img2img')) {
    // The image, its colours inverted: a real transformation of the input a test can check.
    const { data, info } = await sharp(Buffer.from(body.init_images[0], 'base64')).removeAlpha().raw().toBuffer({ resolveWithObject: true })
    for (let i = 0; i < data.length; i++) data[i] = 255 - data[i]
    return json(200, { images: [(await sharp(data, { raw: info }).png().toBuffer()).toString('base64')], parameters: {}, info: '{}' })(req, res)
  }
  if (path.endsWith('/sdapi/v1/extra-single-image')) {
    const input = sharp(Buffer.from(body.image, 'base64'))
    const meta = await input.metadata()
    const scaled = await input.resize((meta.width ?? 1) * (body.upscaling_resize ?? 2)).png().toBuffer()
    return json(200, { image: scaled.toString('base64'), html_info: '' })(req, res)
  }
  if (/\/models\/.+/.test(path)) {
    if (typeof body.inputs !== 'string') return json(400, { error: 'inputs must be a string' })(req, res)
    // image-to-image: base64 image inputs come back inverted; text-to-image: a solid image of the prompt's colour.
    if (body.parameters?.prompt) {
      const { data, info } = await sharp(Buffer.from(body.inputs, 'base64')).removeAlpha().raw().toBuffer({ resolveWithObject: true })
      for (let i = 0; i < data.length; i++) data[i] = 255 - data[i]
      return bytes(200, await sharp(data, { raw: info }).png().toBuffer(), 'image/png')(req, res, body)
    }
    return bytes(200, await solidPng(colourOf(body.inputs), body.parameters?.width ?? 64, body.parameters?.height ?? 48), 'image/png')(req, res, body)
  }
  if (path.endsWith('/v1.0/removebg') || path.endsWith('/api/remove')) {
    const file = multipartFile(body, String(req.headers['content-type']))
    if (!file) return json(400, { errors: [{ title: 'No image given' }] })(req, res)
    // The left half made transparent: the "background" removed.
    const { data, info } = await sharp(file.bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
    for (let y = 0; y < info.height; y++) for (let x = 0; x < info.width / 2; x++) data[(y * info.width + x) * 4 + 3] = 0
    return bytes(200, await sharp(data, { raw: info }).png().toBuffer(), 'image/png')(req, res, body)
  }
  // Speech: OpenAI's /audio/speech, ElevenLabs' stream, Polly's /v1/speech, Azure's /cognitiveservices/v1.
  if (path.endsWith('/audio/speech')) {
    const format = body.response_format ?? 'mp3'
    return bytes(200, fakeAudio(format, `openai:${body.model}:${body.voice}:${body.input}`), format === 'mp3' ? 'audio/mpeg' : `audio/${format}`)(req, res, body)
  }
  const eleven = /\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(path)
  if (eleven) return bytes(200, fakeAudio('mp3', `elevenlabs:${eleven[1]}:${body.text}`), 'audio/mpeg')(req, res, body)
  if (path.endsWith('/v1/speech')) return bytes(200, fakeAudio(body.OutputFormat === 'ogg_vorbis' ? 'ogg' : 'mp3', `polly:${body.VoiceId}:${body.Text}`), 'audio/mpeg')(req, res, body)
  if (path.endsWith('/cognitiveservices/v1')) {
    const output = String(req.headers['x-microsoft-outputformat'])
    const format = output.startsWith('riff') ? 'wav' : output.startsWith('ogg') ? 'ogg' : 'mp3'
    return bytes(200, fakeAudio(format, `azure:${body.toString('utf8')}`), 'audio/mpeg')(req, res, body)
  }
  json(404, { error: `no such path ${path}` })(req, res)
}

export function startFakeProviders(): Promise<FakeProviders> {
  return startScriptedServer<RecordedRequest, Behaviour>({
    record(req, raw, url) {
      let body: any = raw
      if (String(req.headers['content-type']).includes('json')) {
        try {
          body = JSON.parse(raw.toString('utf8'))
        } catch {
          body = raw
        }
      }
      return { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body }
    },
    play: (behaviour, req, res, recorded) => behaviour(req, res, recorded.body),
    answer: (req, res, recorded) => answer(req, res, recorded.body, recorded.query),
  })
}
