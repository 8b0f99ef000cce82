/**
 * The speech workers: the shared bounded pool (workers/pool.ts). Synthesis (WebAssembly) and
 * MP3 encoding are CPU-bound for up to seconds, so they run in worker threads; a job that overruns
 * its time budget has its worker terminated and replaced. Past the queue's bound, a job is refused
 * at once with 503 and `Retry-After` rather than piling up.
 */
import { availableParallelism } from 'node:os'
import { parsePositiveInt } from '../../config.js'
import { WorkerPool } from '../../workers/pool.js'
import { perProcess } from '../../workers/priority.js'
import type { EspeakVoice, SpeechFormat } from '../../../shared/schemas/speech.js'
import type { SpeechJob } from './engines.js'
import type { EncodedAudio } from './pcm.js'

export interface SpeechTask {
  job: SpeechJob
  format?: SpeechFormat
}

export interface SpeechTaskResult {
  audio?: EncodedAudio
  voices?: Array<EspeakVoice & { languages: Array<{ name: string; priority: number }> }>
}

export interface SpeechPoolOptions {
  /** Workers, i.e. jobs that run at the same time (PLAZA_SPEECH_CONCURRENCY). */
  size: number
  /** Jobs that may wait for a free worker (PLAZA_SPEECH_QUEUE). */
  queueLimit: number
  timeoutMs: number
}

/** One or two workers (one per core but one): each holds a compiled engine of 20-100 MB. */
export function speechPoolOptions(env: NodeJS.ProcessEnv, processes = 1): SpeechPoolOptions {
  const size = parsePositiveInt('PLAZA_SPEECH_CONCURRENCY', env.PLAZA_SPEECH_CONCURRENCY, perProcess(Math.max(1, Math.min(2, availableParallelism() - 1)), processes))
  return { size, queueLimit: parsePositiveInt('PLAZA_SPEECH_QUEUE', env.PLAZA_SPEECH_QUEUE, size * 8), timeoutMs: 60_000 }
}

export type SpeechPool = WorkerPool<SpeechTask, SpeechTaskResult>

export function createSpeechPool(options: SpeechPoolOptions): SpeechPool {
  return new WorkerPool<SpeechTask, SpeechTaskResult>(import.meta.url, 'worker', options, {
    shuttingDown: 'Speech is shutting down',
    busy: 'The server is busy synthesising other speech; try again shortly',
    overran: (seconds) => `Speech took longer than ${seconds} s; try a shorter text`,
    worker: 'speech',
  })
}
