/**
 * Local speech for one server: the worker pool (started on the first request) and eSpeak NG's
 * voice list, read once from the installed package.
 */
import { ESPEAK_PACKAGE, type EspeakVoice } from '../../../shared/schemas/speech.js'
import { isOptionalPackageAvailable, optionalModule, type OptionalPackage } from '../optional-package.js'
import type { JobTiming } from '../../workers/pool.js'
import { createSpeechPool, speechPoolOptions, type SpeechPool, type SpeechTask, type SpeechTaskResult } from './pool.js'

export const ESPEAK_OPTIONAL: OptionalPackage = { name: ESPEAK_PACKAGE, override: 'PLAZA_ESPEAK_MODULE' }

export type EspeakVoiceEntry = NonNullable<SpeechTaskResult['voices']>[number]

export interface EspeakVoices {
  voices: EspeakVoiceEntry[]
  /** Every name `voice=` accepts, lower-cased, to the voice identifier it selects. */
  aliases: Map<string, EspeakVoice>
}

export interface SpeechService {
  /** Runs a job in the pool, with how long it waited and ran. */
  run(task: SpeechTask): Promise<SpeechTaskResult & { timing: JobTiming }>
  /** What eSpeak NG is imported from: the package, or PLAZA_ESPEAK_MODULE's path. */
  readonly espeakModule: string
  espeakInstalled(): boolean
  espeakVoices(): Promise<EspeakVoices>
  readonly stats: SpeechPool['stats']
  /** Stops: no new job; queued and running ones have `graceMs` to finish. */
  close(graceMs?: number): Promise<void>
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

/** What warms a speech worker: a word of Flite (its engine compiled and loaded). */
const WARM_UP_SPEECH: SpeechTask = { job: { kind: 'flite', text: 'a', voice: 'kal' }, format: 'wav' }

/** `warm`: on the first request, start every worker (a serving process); off for a one-shot command. */
export function createSpeechService(env: NodeJS.ProcessEnv, options: { warm?: boolean; processes?: number } = {}): SpeechService {
  let pool: SpeechPool | undefined
  let voices: Promise<EspeakVoices> | undefined
  const espeakModule = optionalModule(ESPEAK_OPTIONAL, env)
  const poolOf = () => {
    if (pool) return pool
    pool = createSpeechPool(speechPoolOptions(env, options.processes))
    if (options.warm) void pool.warm(WARM_UP_SPEECH)
    return pool
  }
  return {
    run: async (task) => {
      const { result, timing } = await poolOf().runTimed(task)
      return { ...result, timing }
    },
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
      return pool?.stats ?? { workers: 0, starting: 0, idle: 0, running: 0, waiting: 0 }
    },
    close: async (graceMs = 0) => {
      await pool?.close(graceMs)
    },
  }
}
