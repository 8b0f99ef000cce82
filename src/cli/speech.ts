/**
 * `plaza util tts`: speak a text with Flite or eSpeak NG, embedded (the engines run in this
 * process, with the server's own validation) or on a server (`--url`), and write the audio file;
 * or with a speech provider (`--engine openai|elevenlabs|polly|azure`: the provider layer in this
 * process, configured from this environment as `plaza serve` would be, or the server's), the
 * audio written to the file as it arrives.
 */
import { createWriteStream } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ProviderSpeechEngine } from '../shared/schemas/speech-providers.js'
import type { SpeechEngine, SpeechFormat } from '../shared/schemas/speech.js'
import type { Target } from './client.js'
import { answerType, reach, UsageError } from './client.js'

export interface SpeechRequest {
  engine: SpeechEngine | ProviderSpeechEngine
  text: string
  voice?: string
  /** Default: wav for the local engines, the provider engine's first format (mp3) otherwise. */
  format?: string
  /** Provider engines: openai's model and speed. */
  model?: string
  speed?: string
}

export interface SpeechCommandOutput {
  output: string
  engine: SpeechEngine | ProviderSpeechEngine
  voice: string
  format: string
  /** The local engines' figures; a provider's audio is passed on unread. */
  sample_rate?: number
  duration_ms?: number
  bytes: number
  /** The provider target that spoke (`speech/env`), for the provider engines. */
  provider?: string
}

const PROVIDER_ENGINES: readonly string[] = ['openai', 'elevenlabs', 'polly', 'azure'] satisfies ProviderSpeechEngine[]

type LocalRequest = SpeechRequest & { engine: SpeechEngine; format: SpeechFormat }

interface Result {
  data: Uint8Array
  voice: string
  sampleRate: number
  durationMs: number
}

function queryOf(request: SpeechRequest): Record<string, string> {
  const optional = { voice: request.voice, format: request.format, model: request.model, speed: request.speed }
  return { text: request.text, ...Object.fromEntries(Object.entries(optional).filter((entry): entry is [string, string] => entry[1] !== undefined)) }
}

async function runRemote(url: string, request: LocalRequest): Promise<Result> {
  const response = await reach(url, `${url}/api/tts/${request.engine}?${new URLSearchParams(queryOf(request))}`, { headers: { accept: 'audio/wav, audio/mpeg' } })
  const type = await answerType(url, response, true)
  if (type !== 'audio/wav' && type !== 'audio/mpeg') throw new Error(`unexpected answer from ${url} (${type || 'no content type'}): is it a Plaza server?`)
  return {
    data: new Uint8Array(await response.arrayBuffer()),
    voice: response.headers.get('x-speech-voice') ?? request.voice ?? '',
    sampleRate: Number(response.headers.get('x-audio-sample-rate')),
    durationMs: Number(response.headers.get('x-audio-duration-ms')),
  }
}

/** The engines in this process: the same schemas, voice lists and encoders as the server, without its worker pool. */
async function runEmbedded(request: LocalRequest): Promise<Result> {
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

/** Where a provider's audio comes from: the layer of this process, or the server's streamed answer. */
interface ProviderAudio {
  chunks: AsyncIterable<Uint8Array>
  voice: string
  provider?: string
  close(): Promise<void>
}

async function providerAudioRemote(url: string, request: SpeechRequest, query: Record<string, string>): Promise<ProviderAudio> {
  const response = await reach(url, `${url}/api/tts/${request.engine}?${new URLSearchParams(query)}`, { headers: { accept: 'audio/*' } })
  const type = await answerType(url, response, true)
  if (!type.startsWith('audio/') || !response.body) throw new Error(`unexpected answer from ${url} (${type || 'no content type'}): is it a Plaza server?`)
  const body = response.body
  return {
    chunks: body as unknown as AsyncIterable<Uint8Array>,
    voice: response.headers.get('x-speech-voice') ?? '',
    provider: response.headers.get('x-plaza-provider') ?? undefined,
    close: async () => void (await body.cancel().catch(() => {})),
  }
}

async function providerAudioEmbedded(request: ProviderSpeechRequestOf): Promise<ProviderAudio> {
  const [{ loadProvidersConfig }, { createProviderLayer }, { speak, audioChunks }, { ProviderError }] = await Promise.all([
    import('../server/providers/config.js'),
    import('../server/providers/layer.js'),
    import('../server/providers/speech.js'),
    import('../server/providers/errors.js'),
  ])
  const layer = createProviderLayer(loadProvidersConfig(process.env))
  try {
    const { audio, target } = await speak(layer, request)
    return { chunks: audioChunks(audio), voice: audio.voice, provider: `${target.service}/${target.name}`, close: () => layer.close() }
  } catch (error) {
    await layer.close()
    throw error instanceof ProviderError ? new Error(error.message) : error
  }
}

type ProviderSpeechRequestOf = import('../server/providers/speech.js').ProviderSpeechRequest

/** A provider engine: validated here, spoken embedded or by the server, written as it arrives; a cut leaves no file. */
async function runProviderSpeech(target: Target, request: SpeechRequest, output: string | undefined): Promise<SpeechCommandOutput> {
  const [{ PROVIDER_SPEECH_INPUTS }, { describeZodError }, { ZodError }] = await Promise.all([import('../shared/schemas/speech-providers.js'), import('../server/errors.js'), import('zod')])
  const engine = request.engine as ProviderSpeechEngine
  const query = queryOf(request)
  let input
  try {
    input = PROVIDER_SPEECH_INPUTS[engine].parse(query)
  } catch (error) {
    throw error instanceof ZodError ? new UsageError(describeZodError(error)) : error
  }
  const audio = target.kind === 'remote' ? await providerAudioRemote(target.url, request, query) : await providerAudioEmbedded({ engine, ...input } as ProviderSpeechRequestOf)
  const file = output ?? `speech.${input.format}`
  let bytes = 0
  const counted = async function* () {
    for await (const chunk of audio.chunks) {
      bytes += chunk.byteLength
      yield chunk
    }
  }
  try {
    if (file === '-') {
      for await (const chunk of counted()) if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve))
    } else {
      await pipeline(Readable.from(counted()), createWriteStream(file))
    }
  } catch (error) {
    if (file !== '-') await rm(file, { force: true })
    throw new Error(`the audio stopped before its end (${(error as Error).message})${file === '-' ? '' : '; no file was written'}`)
  } finally {
    await audio.close()
  }
  return { output: file, engine, voice: audio.voice || input.voice, format: input.format, bytes, ...(audio.provider ? { provider: audio.provider } : {}) }
}

/** Speaks `request` where the target says, writes the file (`-` for stdout) and describes it. */
export async function runSpeechCommand(target: Target, given: SpeechRequest, output: string | undefined): Promise<SpeechCommandOutput> {
  if (PROVIDER_ENGINES.includes(given.engine)) return runProviderSpeech(target, given, output)
  if (given.model !== undefined || given.speed !== undefined) throw new UsageError(`--model and --speed are for --engine openai, not ${given.engine}`)
  const request = { ...given, format: given.format ?? 'wav' } as LocalRequest
  const result = target.kind === 'remote' ? await runRemote(target.url, request) : await runEmbedded(request)
  const file = output ?? `speech.${request.format}`
  if (file === '-') process.stdout.write(result.data)
  else await writeFile(file, result.data)
  return { output: file, engine: request.engine, voice: result.voice, format: request.format, sample_rate: result.sampleRate, duration_ms: result.durationMs, bytes: result.data.byteLength }
}
