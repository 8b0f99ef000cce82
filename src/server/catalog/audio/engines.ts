/**
 * The two local speech engines, as they run inside a speech worker: Flite (WASI, through our
 * in-memory WASI) and eSpeak NG (Emscripten, an optional package loaded on first use). Each
 * turns text into mono 16-bit PCM.
 */
import { isAbsolute } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ESPEAK_MISSING_MESSAGE, type EspeakVoice, type FliteVoice } from '../../../shared/schemas/speech.js'
import { fliteModule, runWasi } from './flite-wasi.js'
import { parseWav, type Pcm } from './pcm.js'

/** A refusal the worker passes back with its HTTP status (the engine is missing, the text speaks nothing). */
export class SpeechRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

export type SpeechJob =
  | { kind: 'flite'; text: string; voice: FliteVoice }
  | { kind: 'espeak'; text: string; voice: string; speed: number; pitch: number; module: string }
  | { kind: 'espeak-voices'; module: string }

/** Flite speaks `text` with a built-in voice; its WAV is captured in memory. */
export function synthesizeFlite(text: string, voice: FliteVoice): Pcm {
  // `-t` marks the text as text (never a file name), so text starting with `-` is safe too.
  const run = runWasi(fliteModule(), ['flite', '-voice', voice, '-t', text, '-o', 'speech.wav'])
  const wav = run.files.get('speech.wav')
  if (run.exitCode !== 0 || !wav) throw new Error(`flite exited with ${run.exitCode}: ${run.stderr.slice(0, 500)}`)
  return parseWav(wav)
}

interface EspeakWorker {
  list_voices(): Array<{ name: string; identifier: string; languages: Array<{ priority: number; name: string }> }>
  set_voice(name: string): number
  set_rate(wpm: number): number
  set_pitch(pitch: number): number
  get_samplerate(): number
  synthesize(text: string, callback: (samples: Int16Array, events: unknown[]) => void): void
}

const espeakInstances = new Map<string, Promise<EspeakWorker>>()

/** Loads the eSpeak NG module (a package name, or a path: PLAZA_ESPEAK_MODULE) once per thread. */
function loadEspeak(module: string): Promise<EspeakWorker> {
  let loading = espeakInstances.get(module)
  if (!loading) {
    loading = (async () => {
      // Whatever fails here (no such module, a file that is not eSpeak NG, its start-up) means it cannot be loaded: 503.
      try {
        const { default: init } = (await import(isAbsolute(module) ? pathToFileURL(module).href : module)) as { default?: unknown }
        if (typeof init !== 'function') throw new Error('not the eSpeak NG module')
        const instance = (await init()) as { eSpeakNGWorker: new () => EspeakWorker }
        return new instance.eSpeakNGWorker()
      } catch {
        throw new SpeechRefusal(503, ESPEAK_MISSING_MESSAGE)
      }
    })()
    loading.catch(() => espeakInstances.delete(module))
    espeakInstances.set(module, loading)
  }
  return loading
}

/** eSpeak NG's voices, each with the language names that select it. */
export async function listEspeakVoices(module: string): Promise<Array<EspeakVoice & { languages: Array<{ name: string; priority: number }> }>> {
  const worker = await loadEspeak(module)
  return worker.list_voices().map((voice) => ({
    id: voice.languages[0]?.name ?? voice.identifier,
    name: voice.name,
    identifier: voice.identifier,
    languages: voice.languages.map(({ name, priority }) => ({ name, priority })),
  }))
}

/** Characters eSpeak NG would read as SSML markup: it is called with SSML on, so they are escaped. */
const escapeSsml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** eSpeak NG speaks `text` with the voice `identifier` (from its own list), at `speed` words per minute and `pitch`. */
export async function synthesizeEspeak(job: Extract<SpeechJob, { kind: 'espeak' }>): Promise<Pcm> {
  const worker = await loadEspeak(job.module)
  if (worker.set_voice(job.voice) !== 0) throw new SpeechRefusal(400, `eSpeak NG has no voice ${job.voice}`)
  worker.set_rate(job.speed)
  worker.set_pitch(job.pitch)
  const chunks: Int16Array[] = []
  worker.synthesize(escapeSsml(job.text), (samples) => {
    if (samples?.length) chunks.push(samples.slice())
  })
  const samples = new Int16Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0))
  let at = 0
  for (const chunk of chunks) {
    samples.set(chunk, at)
    at += chunk.length
  }
  return { samples, sampleRate: worker.get_samplerate() }
}
