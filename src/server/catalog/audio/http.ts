/**
 * The local speech operations (docs/speech.md): validate the query, synthesise (and encode) in the
 * speech workers, answer `audio/wav` or `audio/mpeg` bytes, or with `Accept: application/json`
 * the stored file under `uploads/tts/` as `{message, url, path, format, sample_rate, duration_ms, voice}`.
 */
import { TRPCError } from '@trpc/server'
import {
  ESPEAK_DEFAULT_VOICE,
  ESPEAK_MISSING_MESSAGE,
  espeakInput,
  FLITE_DEFAULT_VOICE,
  FLITE_VOICES,
  fliteInput,
  SPEECH_AUDIO_MAX_MS,
  type SpeechFormat,
  type StoredSpeechAnswer,
} from '../../../shared/schemas/speech.js'
import { wantsJson } from '../../codeimage/http.js'
import type { ErrorCases } from '../../errors.js'
import { sendJson } from '../../http.js'
import type { Exchange } from '../../rest/adapter.js'
import { storeGenerated } from '../../uploads/generated.js'
import { uploadUrl } from '../../uploads/pipeline.js'
import type { SpeechJob } from './engines.js'
import { measureAudio, type EncodedAudio } from './pcm.js'
import { serverTiming, type JobTiming } from '../../workers/pool.js'

const MIME: Record<SpeechFormat, string> = { wav: 'audio/wav', mp3: 'audio/mpeg' }

interface Speech {
  job: Exclude<SpeechJob, { kind: 'espeak-voices' }>
  format: SpeechFormat
  /** The voice as answers name it. */
  voice: string
  engineName: string
}

async function readStored(exchange: Exchange, path: string): Promise<Uint8Array> {
  const stream = await exchange.ctx.services.storage.get(path)
  if (!stream) throw new Error(`stored speech ${path} vanished`)
  const parts: Buffer[] = []
  for await (const part of stream) parts.push(part as Buffer)
  return Buffer.concat(parts)
}

async function answerSpeech(exchange: Exchange, speech: Speech): Promise<void> {
  const { req, res, ctx } = exchange
  const { services } = ctx
  const synthesize = async (): Promise<EncodedAudio & { timing: JobTiming }> => {
    const { audio, timing } = await services.speech.run({ job: speech.job, format: speech.format })
    if (!audio) throw new Error('speech worker answered no audio')
    return { ...audio, timing }
  }
  if (wantsJson(req.headers.accept)) {
    let made: EncodedAudio | undefined
    const { module: _module, ...key } = speech.job as SpeechJob & { module?: string }
    const stored = await storeGenerated(services, {
      kind: 'tts',
      key: { ...key, format: speech.format },
      ext: speech.format,
      mime: MIME[speech.format],
      render: async () => {
        made = await synthesize()
        return { body: Buffer.from(made.data.buffer, made.data.byteOffset, made.data.byteLength) }
      },
    })
    // A reused file is measured again rather than trusted to a second store of its figures.
    const measured = made ?? measureAudio(await readStored(exchange, stored.path), speech.format)
    const answer: StoredSpeechAnswer = {
      message: `Speech synthesised with ${speech.engineName} (voice ${speech.voice})`,
      url: uploadUrl(ctx.origin, stored.path),
      path: stored.path,
      format: speech.format,
      sample_rate: measured.sampleRate,
      duration_ms: measured.durationMs,
      voice: speech.voice,
    }
    sendJson(res, 200, answer)
    return
  }
  const audio = await synthesize()
  res.writeHead(200, {
    'content-type': MIME[speech.format],
    'content-length': audio.data.byteLength,
    'x-audio-sample-rate': String(audio.sampleRate),
    'x-audio-duration-ms': String(audio.durationMs),
    'x-speech-voice': speech.voice,
    'server-timing': serverTiming(audio.timing),
    'cache-control': 'no-store',
  })
  res.end(Buffer.from(audio.data.buffer, audio.data.byteOffset, audio.data.byteLength))
}

/** What a speech engine refuses (SpeechRefusal in engines.ts, ErrorCases in errors.ts). */
export const SPEECH_ERRORS: ErrorCases = {
  400: 'The text has nothing to speak, or the engine has no such voice',
  413: `The speech would last longer than ${SPEECH_AUDIO_MAX_MS / 1000} s (send less text, or a higher speed)`,
}

/** eSpeak NG is an optional package: without it its operations answer 503, naming it. */
export const ESPEAK_ERRORS: ErrorCases = { 503: 'eSpeak NG (the optional package @echogarden/espeak-ng-emscripten) is not installed' }

export async function handleFlite(exchange: Exchange): Promise<void> {
  const input = fliteInput.parse(exchange.query)
  await answerSpeech(exchange, { job: { kind: 'flite', text: input.text, voice: input.voice }, format: input.format, voice: input.voice, engineName: 'Flite' })
}

/** eSpeak NG's voices, or 503 naming the package when it is not installed. */
async function espeakVoices(exchange: Exchange) {
  const { speech } = exchange.ctx.services
  if (!speech.espeakInstalled()) throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: ESPEAK_MISSING_MESSAGE })
  return speech.espeakVoices()
}

export async function handleEspeak(exchange: Exchange): Promise<void> {
  const input = espeakInput.parse(exchange.query)
  const { voices, aliases } = await espeakVoices(exchange)
  const voice = aliases.get(input.voice.toLowerCase())
  if (!voice) {
    const ids = voices.map((v) => v.id)
    throw new TRPCError({ code: 'BAD_REQUEST', message: `voice must be one of eSpeak NG's voices (GET /api/tts/espeak/voices describes them): ${ids.join(', ')}` })
  }
  const { speech } = exchange.ctx.services
  await answerSpeech(exchange, {
    job: { kind: 'espeak', text: input.text, voice: voice.identifier, speed: input.speed, pitch: input.pitch, module: speech.espeakModule },
    format: input.format,
    voice: input.voice.toLowerCase(),
    engineName: 'eSpeak NG',
  })
}

export async function handleFliteVoices({ res }: Exchange): Promise<void> {
  sendJson(res, 200, { message: `${FLITE_VOICES.length} Flite voices`, default: FLITE_DEFAULT_VOICE, voices: FLITE_VOICES })
}

export async function handleEspeakVoices(exchange: Exchange): Promise<void> {
  const { voices } = await espeakVoices(exchange)
  sendJson(exchange.res, 200, {
    message: `${voices.length} eSpeak NG voices`,
    default: ESPEAK_DEFAULT_VOICE,
    voices: voices.map(({ id, name, identifier, languages }) => ({ id, name, identifier, languages: languages.map((language) => language.name) })),
  })
}
