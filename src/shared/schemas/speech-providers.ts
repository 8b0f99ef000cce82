/**
 * Speech from providers (docs/speech.md#providers): `GET /api/tts/openai`, `/api/tts/elevenlabs`,
 * `/api/tts/polly`, `/api/tts/azure`. Their query schemas, formats and defaults, shared by the
 * server and the CLI. The text follows the local engines' rules, with a limit of its own: a
 * provider's speech costs this server nothing but the bytes it relays.
 */
import { z } from 'zod'
import { speechTextOf } from './speech.js'

/** The longest text one request may send to a provider, in characters. */
export const PROVIDER_SPEECH_TEXT_MAX = 2000
const speechText = speechTextOf(PROVIDER_SPEECH_TEXT_MAX)

export const PROVIDER_SPEECH_ENGINES = ['openai', 'elevenlabs', 'polly', 'azure'] as const
export type ProviderSpeechEngine = (typeof PROVIDER_SPEECH_ENGINES)[number]

/** Every audio format a provider engine may answer, and its Content-Type. */
export const PROVIDER_SPEECH_MIME = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/ogg',
  ogg: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
} as const
export type ProviderSpeechFormat = keyof typeof PROVIDER_SPEECH_MIME

/** The formats each engine offers; the first is the default. */
export const PROVIDER_SPEECH_FORMATS = {
  openai: ['mp3', 'opus', 'aac', 'flac', 'wav'],
  elevenlabs: ['mp3'],
  polly: ['mp3', 'ogg'],
  azure: ['mp3', 'wav', 'ogg'],
} as const satisfies Record<ProviderSpeechEngine, readonly ProviderSpeechFormat[]>

/** The voice each engine speaks with when none is asked for. */
export const PROVIDER_SPEECH_DEFAULT_VOICES: Record<ProviderSpeechEngine, string> = {
  openai: 'alloy',
  // ElevenLabs' premade "George".
  elevenlabs: 'JBFqnCBsd6RMkjVDRZzb',
  polly: 'Joanna',
  azure: 'en-US-AvaMultilingualNeural',
}

/** OpenAI's speed range. */
export const OPENAI_SPEECH_SPEED = { min: 0.25, max: 4 } as const

const formatOf = <E extends ProviderSpeechEngine>(engine: E) => {
  const formats = PROVIDER_SPEECH_FORMATS[engine] as readonly string[]
  return z
    .string()
    .transform((value) => value.trim().toLowerCase())
    .refine((value) => formats.includes(value), `format must be one of: ${formats.join(', ')}`)
    .optional()
    .transform((value) => (value ?? formats[0]) as (typeof PROVIDER_SPEECH_FORMATS)[E][number])
    .describe(`${formats.join(', ')} (default ${formats[0]})`)
}

const voiceOf = (engine: ProviderSpeechEngine, pattern: RegExp, what: string) =>
  z
    .string()
    .trim()
    .refine((value) => pattern.test(value), `voice must be ${what}`)
    .optional()
    .transform((value) => value ?? PROVIDER_SPEECH_DEFAULT_VOICES[engine])
    .describe(`${what} (default ${PROVIDER_SPEECH_DEFAULT_VOICES[engine]})`)

/** `GET /api/tts/openai?text=&voice=&model=&format=&speed=`: OpenAI's `/audio/speech` or a server speaking it (Kokoro-FastAPI, openedai-speech). */
export const openaiSpeechInput = z.object({
  text: speechText,
  // Local servers name voices their own way (Kokoro's `af_bella`, mixes such as `af_bella+af_sky`).
  voice: voiceOf('openai', /^[\w.+,:-]{1,100}$/, 'a voice name of letters, digits and _ . + , : - (alloy, nova, af_bella, ...)'),
  model: z
    .string()
    .trim()
    .regex(/^[\w.:/-]{1,100}$/, 'model must be a model name of letters, digits and _ . : / -')
    .optional()
    .describe('the upstream model (default: the operator’s PLAZA_SPEECH_MODEL, else tts-1)'),
  format: formatOf('openai'),
  speed: z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, 'speed must be a number')
    .transform(Number)
    .refine((n) => n >= OPENAI_SPEECH_SPEED.min && n <= OPENAI_SPEECH_SPEED.max, `speed must be from ${OPENAI_SPEECH_SPEED.min} to ${OPENAI_SPEECH_SPEED.max}`)
    .optional()
    .describe(`${OPENAI_SPEECH_SPEED.min} to ${OPENAI_SPEECH_SPEED.max} (default 1)`),
})
export type OpenAiSpeechInput = z.output<typeof openaiSpeechInput>

/** `GET /api/tts/elevenlabs?text=&voice=`: the voice is an ElevenLabs voice id (it goes into the upstream's path). */
export const elevenlabsInput = z.object({
  text: speechText,
  voice: voiceOf('elevenlabs', /^[A-Za-z0-9]{1,64}$/, 'an ElevenLabs voice id (letters and digits)'),
  format: formatOf('elevenlabs'),
})
export type ElevenLabsInput = z.output<typeof elevenlabsInput>

/** `GET /api/tts/polly?text=&voice=&format=`: a Polly voice id such as Joanna, Matthew, Lea (letter case as Polly spells it, first letter made capital). */
export const pollyInput = z.object({
  text: speechText,
  voice: voiceOf('polly', /^[A-Za-z]{2,32}$/, 'an Amazon Polly voice id such as Joanna, Matthew or Lea').transform((value) => value[0].toUpperCase() + value.slice(1)),
  format: formatOf('polly'),
})
export type PollyInput = z.output<typeof pollyInput>

/** An Azure voice name starts with its locale: `en-US-AvaMultilingualNeural`, `zh-CN-XiaoxiaoNeural`, `en-US-Ava:DragonHDLatestNeural`. */
export const AZURE_VOICE = /^([a-z]{2,3}-[A-Za-z0-9]{2,8})(-[A-Za-z0-9]{2,8})?-[A-Za-z0-9:]{1,80}$/

/** `GET /api/tts/azure?text=&voice=&format=`. */
export const azureSpeechInput = z.object({
  text: speechText,
  voice: voiceOf('azure', AZURE_VOICE, 'an Azure voice name such as en-US-AvaMultilingualNeural or de-DE-KatjaNeural'),
  format: formatOf('azure'),
})
export type AzureSpeechInput = z.output<typeof azureSpeechInput>

export const PROVIDER_SPEECH_INPUTS = { openai: openaiSpeechInput, elevenlabs: elevenlabsInput, polly: pollyInput, azure: azureSpeechInput } as const

/** The service (provider configuration) behind each engine. */
export const PROVIDER_SPEECH_SERVICES = { openai: 'speech', elevenlabs: 'elevenlabs', polly: 'polly', azure: 'azure_speech' } as const
