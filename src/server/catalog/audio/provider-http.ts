/**
 * Speech from providers (docs/speech.md#providers): `GET /api/tts/openai`, `/api/tts/elevenlabs`,
 * `/api/tts/polly`, `/api/tts/azure`. The audio is streamed to the client as it arrives from the
 * provider (chunked, no length): retries and fallbacks happen before its first byte; once the
 * answer has begun, an upstream cut, silence or excess ends the client's response abruptly (never
 * a short file that looks complete). With `Accept: application/json` the whole audio is stored
 * under `uploads/tts/` (content-addressed, like the local engines' files) and described.
 */
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { PROVIDER_SPEECH_INPUTS, PROVIDER_SPEECH_MIME, PROVIDER_SPEECH_SERVICES, type ProviderSpeechEngine } from '../../../shared/schemas/speech-providers.js'
import { wantsJson } from '../../codeimage/http.js'
import { closedSignal, sendJson } from '../../http.js'
import { ClientAbortError, ProviderError, UpstreamError } from '../../providers/errors.js'
import { providerLayerOf, type ProviderLayer } from '../../providers/layer.js'
import { audioChunks, speak, type ProviderSpeechRequest } from '../../providers/speech.js'
import type { Exchange } from '../../rest/adapter.js'
import { storeGenerated } from '../../uploads/generated.js'
import { uploadUrl } from '../../uploads/pipeline.js'

const ENGINE_NAMES: Record<ProviderSpeechEngine, string> = { openai: 'the OpenAI-compatible provider', elevenlabs: 'ElevenLabs', polly: 'Amazon Polly', azure: 'Azure AI Speech' }

/** The JSON answer: the audio stored under `uploads/tts/`. */
export interface StoredProviderSpeechAnswer {
  message: string
  url: string
  path: string
  format: string
  voice: string
  bytes: number
}

/** Stores the whole audio (a cut is a 502/504, nothing stored) and describes it. */
async function answerStored(exchange: Exchange, layer: ProviderLayer, request: ProviderSpeechRequest): Promise<void> {
  const { ctx, res } = exchange
  let provider: string | undefined
  const { engine, ...input } = request
  const stored = await storeGenerated(ctx.services, {
    kind: 'tts',
    key: { provider: engine, ...input },
    // OpenAI's opus comes in an Ogg container.
    ext: request.format === 'opus' ? 'ogg' : request.format,
    mime: PROVIDER_SPEECH_MIME[request.format],
    render: async () => {
      // Not bound to this client's connection: another request for the same file may be waiting on this one.
      const { audio, target } = await speak(layer, request)
      provider = `${target.service}/${target.name}`
      const parts: Buffer[] = []
      try {
        for await (const chunk of audioChunks(audio)) parts.push(chunk)
      } catch (error) {
        if (!(error instanceof UpstreamError)) throw error
        throw new ProviderError(error.kind === 'timeout' ? 504 : 502, layer.redact(`${error.message} (the audio stopped before its end)`))
      }
      return { body: Buffer.concat(parts) }
    },
  })
  const answer: StoredProviderSpeechAnswer = {
    message: `Speech synthesised with ${ENGINE_NAMES[engine]} (voice ${request.voice})`,
    url: uploadUrl(ctx.origin, stored.path),
    path: stored.path,
    format: request.format,
    voice: request.voice,
    bytes: stored.size,
  }
  sendJson(res, 200, answer, provider ? { 'x-plaza-provider': provider } : {})
}

const handler = (engine: ProviderSpeechEngine) => async (exchange: Exchange) => {
  const { req, res, ctx } = exchange
  const request = { engine, ...PROVIDER_SPEECH_INPUTS[engine].parse(exchange.query) } as ProviderSpeechRequest
  const layer = await providerLayerOf(ctx.services)
  if (wantsJson(req.headers.accept)) {
    // Nothing is looked up or stored when no provider could serve it.
    layer.require(PROVIDER_SPEECH_SERVICES[engine])
    return answerStored(exchange, layer, request)
  }
  const { audio, target } = await speak(layer, request, closedSignal(res))
  res.writeHead(200, {
    'content-type': audio.mime,
    'x-speech-voice': audio.voice,
    // Which target spoke (`speech/env`, `polly/polly.1`): after a fallback the operator can tell.
    'x-plaza-provider': `${target.service}/${target.name}`,
    'cache-control': 'no-store',
  })
  try {
    await pipeline(Readable.from(audioChunks(audio), { objectMode: false }), res)
  } catch (error) {
    // The answer has begun: nothing can be said any more but that it is not whole.
    res.destroy()
    if (error instanceof ClientAbortError || (error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') return
    ctx.services.logger.warn('speech stream cut', { service: target.service, provider: target.name, protocol: target.protocol, message: layer.redact(String((error as Error)?.message ?? error)) })
  }
}

export const handleOpenAiSpeech = handler('openai')
export const handleElevenLabsSpeech = handler('elevenlabs')
export const handlePollySpeech = handler('polly')
export const handleAzureSpeech = handler('azure')
