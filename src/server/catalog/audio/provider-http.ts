/**
 * Speech from providers (docs/speech.md#providers): `GET /api/tts/openai`, `/api/tts/elevenlabs`,
 * `/api/tts/polly`, `/api/tts/azure`. The audio is streamed to the client as it arrives from the
 * provider (chunked, no length): retries and fallbacks happen before its first byte; once the
 * answer has begun, an upstream cut, silence or excess ends the client's response abruptly (never
 * a short file that looks complete).
 */
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { PROVIDER_SPEECH_INPUTS, type ProviderSpeechEngine } from '../../../shared/schemas/speech-providers.js'
import { closedSignal } from '../../http.js'
import { ClientAbortError } from '../../providers/errors.js'
import { providerLayerOf } from '../../providers/layer.js'
import { audioChunks, speak, type ProviderSpeechRequest } from '../../providers/speech.js'
import type { Exchange } from '../../rest/adapter.js'
import { enforceRateLimit } from '../../trpc.js'

const handler = (engine: ProviderSpeechEngine) => async (exchange: Exchange) => {
  const { res, ctx } = exchange
  await enforceRateLimit(ctx, 'default', `ip:${ctx.clientAddress}`)
  const request = { engine, ...PROVIDER_SPEECH_INPUTS[engine].parse(exchange.query) } as ProviderSpeechRequest
  const layer = await providerLayerOf(ctx.services)
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
