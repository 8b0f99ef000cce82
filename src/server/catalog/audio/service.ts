/**
 * Local speech for one server: the worker pool (started on the first request) and eSpeak NG's
 * voice list, read once from the installed package.
 */
import { ESPEAK_PACKAGE, type EspeakVoice } from '../../../shared/schemas/speech.js'
import { isOptionalPackageAvailable, optionalModule, type OptionalPackage } from '../optional-package.js'
import { createSpeechPool, speechPoolOptions, type SpeechPool, type SpeechTask, type SpeechTaskResult } from './pool.js'

export const ESPEAK_OPTIONAL: OptionalPackage = { name: ESPEAK_PACKAGE, override: 'PLAZA_ESPEAK_MODULE' }

export type EspeakVoiceEntry = NonNullable<SpeechTaskResult['voices']>[number]

export interface EspeakVoices {
  voices: EspeakVoiceEntry[]
  /** Every name `voice=` accepts, lower-cased, to the voice identifier it selects. */
  aliases: Map<string, EspeakVoice>
}

export interface SpeechService {
  run(task: SpeechTask): Promise<SpeechTaskResult>
  /** What eSpeak NG is imported from: the package, or PLAZA_ESPEAK_MODULE's path. */
  readonly espeakModule: string
  espeakInstalled(): boolean
  espeakVoices(): Promise<EspeakVoices>
  readonly stats: SpeechPool['stats']
  close(): Promise<void>
}

/**
 * The names that select a voice: its identifier (`roa/fr`) and the identifier's last part (`fr`),
 * and each language it declares (`fr-fr`), a language shared by several voices going to the one
 * eSpeak NG ranks first (lowest priority number), as eSpeak NG itself would choose.
 */
export function voiceAliases(voices: EspeakVoiceEntry[]): Map<string, EspeakVoice> {
  const aliases = new Map<string, EspeakVoice>()
  const ranked = new Map<string, number>()
  const entry = ({ id, name, identifier }: EspeakVoiceEntry): EspeakVoice => ({ id, name, identifier })
  for (const voice of voices) {
    for (const { name, priority } of voice.languages) {
      const key = name.toLowerCase()
      if ((ranked.get(key) ?? Infinity) > priority) {
        ranked.set(key, priority)
        aliases.set(key, entry(voice))
      }
    }
  }
  for (const voice of voices) {
    aliases.set(voice.identifier.toLowerCase(), entry(voice))
    const short = voice.identifier.split('/').pop()!.toLowerCase()
    if (!aliases.has(short)) aliases.set(short, entry(voice))
  }
  return aliases
}

export function createSpeechService(env: NodeJS.ProcessEnv): SpeechService {
  let pool: SpeechPool | undefined
  let voices: Promise<EspeakVoices> | undefined
  const espeakModule = optionalModule(ESPEAK_OPTIONAL, env)
  const poolOf = () => (pool ??= createSpeechPool(speechPoolOptions(env)))
  return {
    run: (task) => poolOf().run(task),
    espeakModule,
    espeakInstalled: () => isOptionalPackageAvailable(ESPEAK_OPTIONAL, env),
    espeakVoices() {
      voices ??= poolOf()
        .run({ job: { kind: 'espeak-voices', module: espeakModule } })
        .then(({ voices: list = [] }) => ({ voices: list, aliases: voiceAliases(list) }))
      voices.catch(() => (voices = undefined))
      return voices
    },
    get stats() {
      return pool?.stats ?? { workers: 0, running: 0, waiting: 0 }
    },
    close: async () => {
      await pool?.close()
    },
  }
}
