/**
 * `plaza util tts`: speak a text with Flite or eSpeak NG, embedded (the engines run in this
 * process, with the server's own validation) or on a server (`--url`), and write the audio file.
 */
import { writeFile } from 'node:fs/promises'
import type { SpeechEngine, SpeechFormat } from '../shared/schemas/speech.js'
import type { Target } from './client.js'
import { remoteFetch, UsageError } from './client.js'

export interface SpeechRequest {
  engine: SpeechEngine
  text: string
  voice?: string
  format: SpeechFormat
}

export interface SpeechCommandOutput {
  output: string
  engine: SpeechEngine
  voice: string
  format: SpeechFormat
  sample_rate: number
  duration_ms: number
  bytes: number
}

interface Result {
  data: Uint8Array
  voice: string
  sampleRate: number
  durationMs: number
}

function queryOf(request: SpeechRequest): Record<string, string> {
  return { text: request.text, format: request.format, ...(request.voice !== undefined ? { voice: request.voice } : {}) }
}

async function runRemote(url: string, request: SpeechRequest): Promise<Result> {
  let response
  try {
    response = await remoteFetch(`${url}/api/tts/${request.engine}?${new URLSearchParams(queryOf(request))}`, { headers: { accept: 'audio/wav, audio/mpeg' } })
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    throw new Error(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`)
  }
  const type = response.headers.get('content-type') ?? ''
  if (!response.ok) {
    const body = type.includes('json') ? ((await response.json()) as { message?: string }) : null
    const message = body?.message ?? `unexpected answer from ${url} (HTTP ${response.status}): is it a Plaza server?`
    throw response.status === 400 ? new UsageError(message) : new Error(message)
  }
  if (type !== 'audio/wav' && type !== 'audio/mpeg') throw new Error(`unexpected answer from ${url} (${type || 'no content type'}): is it a Plaza server?`)
  return {
    data: new Uint8Array(await response.arrayBuffer()),
    voice: response.headers.get('x-speech-voice') ?? request.voice ?? '',
    sampleRate: Number(response.headers.get('x-audio-sample-rate')),
    durationMs: Number(response.headers.get('x-audio-duration-ms')),
  }
}

/** The engines in this process: the same schemas, voice lists and encoders as the server, without its worker pool. */
async function runEmbedded(request: SpeechRequest): Promise<Result> {
  const [schemas, { describeZodError }, { ZodError }, engines, { encodeAudio }, service] = await Promise.all([
    import('../shared/schemas/speech.js'),
    import('../server/errors.js'),
    import('zod'),
    import('../server/catalog/audio/engines.js'),
    import('../server/catalog/audio/pcm.js'),
    import('../server/catalog/audio/service.js'),
  ])
  const parse = <T>(run: () => T): T => {
    try {
      return run()
    } catch (error) {
      throw error instanceof ZodError ? new UsageError(describeZodError(error)) : error
    }
  }
  const fail = (error: unknown): never => {
    throw error instanceof engines.SpeechRefusal && error.status === 400 ? new UsageError(error.message) : error instanceof engines.SpeechRefusal ? new Error(error.message) : error
  }
  if (request.engine === 'flite') {
    const input = parse(() => schemas.fliteInput.parse(queryOf(request)))
    const pcm = engines.synthesizeFlite(input.text, input.voice)
    if (pcm.samples.length === 0) throw new UsageError('text has nothing to speak')
    const audio = encodeAudio(pcm, input.format)
    return { data: audio.data, voice: input.voice, sampleRate: audio.sampleRate, durationMs: audio.durationMs }
  }
  const input = parse(() => schemas.espeakInput.parse(queryOf(request)))
  const { isOptionalPackageAvailable, optionalModule } = await import('../server/catalog/optional-package.js')
  if (!isOptionalPackageAvailable(service.ESPEAK_OPTIONAL, process.env)) throw new Error(schemas.ESPEAK_MISSING_MESSAGE)
  const module = optionalModule(service.ESPEAK_OPTIONAL, process.env)
  const voices = await engines.listEspeakVoices(module).catch(fail)
  const voice = service.voiceAliases(voices).get(input.voice.toLowerCase())
  if (!voice) throw new UsageError(`voice must be one of eSpeak NG's voices: ${voices.map((v) => v.id).join(', ')}`)
  const pcm = await engines.synthesizeEspeak({ kind: 'espeak', text: input.text, voice: voice.identifier, speed: input.speed, pitch: input.pitch, module }).catch(fail)
  if (pcm.samples.length === 0) throw new UsageError('text has nothing to speak')
  const audio = encodeAudio(pcm, input.format)
  return { data: audio.data, voice: input.voice.toLowerCase(), sampleRate: audio.sampleRate, durationMs: audio.durationMs }
}

/** Speaks `request` where the target says, writes the file (`-` for stdout) and describes it. */
export async function runSpeechCommand(target: Target, request: SpeechRequest, output: string | undefined): Promise<SpeechCommandOutput> {
  const result = target.kind === 'remote' ? await runRemote(target.url, request) : await runEmbedded(request)
  const file = output ?? `speech.${request.format}`
  if (file === '-') process.stdout.write(result.data)
  else await writeFile(file, result.data)
  return { output: file, engine: request.engine, voice: result.voice, format: request.format, sample_rate: result.sampleRate, duration_ms: result.durationMs, bytes: result.data.byteLength }
}
