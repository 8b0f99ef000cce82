/**
 * The speech protocols (docs/speech.md#providers): OpenAI's `POST /audio/speech` (also spoken by
 * Kokoro-FastAPI, openedai-speech and other local servers), ElevenLabs' `POST
 * /v1/text-to-speech/{voice}/stream`, Amazon Polly's `POST /v1/speech` (signed with SigV4) and
 * Azure AI Speech's `POST /cognitiveservices/v1` (SSML). Each attempt ends at the audio's first
 * bytes, checked to be the format asked for: failures until then are retried and fall back like
 * any provider call; what follows is streamed on by the caller, and a cut there is final.
 */
import {
  PROVIDER_SPEECH_MIME,
  PROVIDER_SPEECH_SERVICES,
  type AzureSpeechInput,
  type ElevenLabsInput,
  type OpenAiSpeechInput,
  type PollyInput,
  type ProviderSpeechFormat,
} from '../../shared/schemas/speech-providers.js'
import { signAwsRequest } from './aws-sigv4.js'
import type { ServiceTarget } from './config.js'
import { UpstreamError } from './errors.js'
import { upstreamMessage, type UpstreamResponse } from './http.js'
import type { Attempt, ProviderLayer } from './layer.js'
import { lookup } from '../../shared/lookup.js'

/** The most audio one answer may carry: minutes of WAV at 24 kHz. */
export const SPEECH_UPSTREAM_MAX_BYTES = 32 * 1024 * 1024

/** What an engine speaks, once validated (the inputs of `src/shared/schemas/speech-providers.ts`). */
export type ProviderSpeechRequest =
  | ({ engine: 'openai' } & OpenAiSpeechInput)
  | ({ engine: 'elevenlabs' } & ElevenLabsInput)
  | ({ engine: 'polly' } & PollyInput)
  | ({ engine: 'azure' } & AzureSpeechInput)

/** Audio arriving: its first bytes (already checked) and the rest, to be read once. */
export interface AudioStream {
  format: ProviderSpeechFormat
  mime: string
  voice: string
  head: Buffer
  rest: AsyncIterator<Buffer>
}

/** The bytes each format starts with. */
function looksLike(format: ProviderSpeechFormat, head: Buffer): boolean {
  const ascii = head.subarray(0, 4).toString('latin1')
  switch (format) {
    case 'mp3':
      // An ID3 tag, or an MPEG audio frame's sync bits.
      return ascii.startsWith('ID3') || (head[0] === 0xff && (head[1] & 0xe0) === 0xe0)
    case 'wav':
      return ascii === 'RIFF'
    case 'opus':
    case 'ogg':
      return ascii === 'OggS'
    case 'flac':
      return ascii === 'fLaC'
    case 'aac':
      // ADTS frames (sync bits, layer 0), or an ADIF header.
      return ascii === 'ADIF' || (head[0] === 0xff && (head[1] & 0xf6) === 0xf0)
  }
}

const SNIFF_BYTES = 4

/**
 * Reads an answer up to its first bytes and checks them; the attempt's end. An answer declared as
 * JSON, text or HTML is an error message whatever its status (local servers answer some with 200).
 */
async function openAudio(call: Attempt, response: UpstreamResponse, format: ProviderSpeechFormat, voice: string): Promise<AudioStream> {
  if (/json|^text\/|html|xml/i.test(response.contentType)) {
    const body = await response.bytes(64 * 1024).catch((error) => {
      // Too long to be a message: said so; a timeout or a dropped connection stays what it is.
      if (error instanceof UpstreamError && error.kind === 'protocol') return Buffer.from('(a long body)')
      throw error
    })
    const text = body.toString('utf8')
    throw new UpstreamError('protocol', `${call.label} answered ${response.contentType.split(';')[0]} instead of audio: ${upstreamMessage(text)}`)
  }
  const rest = response.chunks(SPEECH_UPSTREAM_MAX_BYTES)[Symbol.asyncIterator]()
  let head: Buffer = Buffer.alloc(0)
  while (head.length < SNIFF_BYTES) {
    const next = await rest.next()
    if (next.done) break
    head = head.length === 0 ? next.value : Buffer.concat([head, next.value])
  }
  if (head.length === 0) throw new UpstreamError('protocol', `${call.label} answered no audio`)
  if (head.length < SNIFF_BYTES || !looksLike(format, head)) {
    await rest.return?.()
    throw new UpstreamError('protocol', `${call.label} answered something that is not ${format} audio`)
  }
  return { format, mime: PROVIDER_SPEECH_MIME[format], voice, head, rest }
}

const json = (value: unknown) => ({ bytes: Buffer.from(JSON.stringify(value)), type: 'application/json' })

/** OpenAI's `/audio/speech`: the base URL includes the version (`https://api.openai.com/v1`). */
async function openai(call: Attempt, input: OpenAiSpeechInput): Promise<AudioStream> {
  const { target } = call
  const model = (input.model ? (lookup(target.models, input.model) ?? input.model) : target.model) ?? 'tts-1'
  const response = await call.request({
    url: `${target.baseUrl}/audio/speech`,
    headers: { ...target.headers, ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}), accept: PROVIDER_SPEECH_MIME[input.format] },
    body: { json: { model, input: input.text, voice: input.voice, response_format: input.format, ...(input.speed !== undefined ? { speed: input.speed } : {}) } },
  })
  return openAudio(call, response, input.format, input.voice)
}

/** ElevenLabs' streaming endpoint; the key in `xi-api-key`. */
async function elevenlabs(call: Attempt, input: ElevenLabsInput): Promise<AudioStream> {
  const { target } = call
  const response = await call.request({
    url: `${target.baseUrl}/v1/text-to-speech/${encodeURIComponent(input.voice)}/stream?output_format=mp3_44100_128`,
    headers: { ...target.headers, ...(target.apiKey ? { 'xi-api-key': target.apiKey } : {}), accept: 'audio/mpeg' },
    body: { json: { text: input.text, model_id: target.model ?? 'eleven_multilingual_v2' } },
  })
  return openAudio(call, response, input.format, input.voice)
}

const POLLY_FORMATS: Record<PollyInput['format'], string> = { mp3: 'mp3', ogg: 'ogg_vorbis' }

/** Amazon Polly's SynthesizeSpeech, signed with SigV4 (service `polly`); the target's `model` is Polly's engine (standard, neural, long-form, generative). */
async function polly(call: Attempt, input: PollyInput): Promise<AudioStream> {
  const { target } = call
  const url = `${target.baseUrl}/v1/speech`
  const body = JSON.stringify({ Text: input.text, TextType: 'text', VoiceId: input.voice, OutputFormat: POLLY_FORMATS[input.format], ...(target.model ? { Engine: target.model } : {}) })
  const headers = { ...target.headers, 'content-type': 'application/json' }
  const signed = await signAwsRequest(
    { url, method: 'POST', headers, body },
    { region: target.options.region, service: 'polly', credentials: { accessKeyId: target.accessKeyId ?? '', secretAccessKey: target.apiKey ?? '' } },
  )
  const response = await call.request({ url, headers: signed, body: { bytes: Buffer.from(body), type: 'application/json' } })
  return openAudio(call, response, input.format, input.voice)
}

const AZURE_FORMATS: Record<AzureSpeechInput['format'], string> = { mp3: 'audio-24khz-48kbitrate-mono-mp3', wav: 'riff-24khz-16bit-mono-pcm', ogg: 'ogg-24khz-16bit-mono-opus' }

/** Text and attribute values in XML: markup in the text is spoken, never obeyed. */
export const escapeXml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)

/** The SSML document Azure speaks: the voice's locale (its name up to the last dash) as the language. */
export function azureSsml(text: string, voice: string): string {
  const lang = voice.slice(0, voice.lastIndexOf('-'))
  return `<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="${escapeXml(lang)}"><voice name="${escapeXml(voice)}">${escapeXml(text)}</voice></speak>`
}

/** Azure AI Speech's REST synthesis: SSML in, the output format in a header, the key in `Ocp-Apim-Subscription-Key` (a speech container needs none). */
async function azure(call: Attempt, input: AzureSpeechInput): Promise<AudioStream> {
  const { target } = call
  const response = await call.request({
    url: `${target.baseUrl}/cognitiveservices/v1`,
    headers: {
      ...target.headers,
      ...(target.apiKey ? { 'ocp-apim-subscription-key': target.apiKey } : {}),
      'x-microsoft-outputformat': AZURE_FORMATS[input.format],
      'user-agent': 'plaza',
    },
    body: { bytes: Buffer.from(azureSsml(input.text, input.voice)), type: 'application/ssml+xml' },
  })
  return openAudio(call, response, input.format, input.voice)
}

/** One attempt of `request` on one target. */
export function speakOnce(call: Attempt, request: ProviderSpeechRequest): Promise<AudioStream> {
  switch (request.engine) {
    case 'openai':
      return openai(call, request)
    case 'elevenlabs':
      return elevenlabs(call, request)
    case 'polly':
      return polly(call, request)
    case 'azure':
      return azure(call, request)
  }
}

/** Speaks `request` through the engine's service with the layer's retries and fallbacks; resolves at the audio's first bytes. */
export async function speak(layer: ProviderLayer, request: ProviderSpeechRequest, signal?: AbortSignal): Promise<{ audio: AudioStream; target: ServiceTarget }> {
  const { value, target } = await layer.call(PROVIDER_SPEECH_SERVICES[request.engine], (call) => speakOnce(call, request), signal)
  return { audio: value, target }
}

/** The audio's bytes in order: the head, then the rest as it arrives (an upstream cut or timeout throws). */
export async function* audioChunks(audio: AudioStream): AsyncGenerator<Buffer> {
  yield audio.head
  for await (const chunk of { [Symbol.asyncIterator]: () => audio.rest }) yield chunk
}
