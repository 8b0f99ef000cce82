/** A speech worker: runs synthesis and encoding jobs one at a time, off the server's event loop. */
import { parentPort } from 'node:worker_threads'
import { listEspeakVoices, SpeechRefusal, synthesizeEspeak, synthesizeFlite, type SpeechJob } from './engines.js'
import { serveJobs } from '../../workers/pool.js'
import { encodeAudio } from './pcm.js'
import type { SpeechTask, SpeechTaskResult } from './pool.js'
import { SPEECH_AUDIO_MAX_MS } from '../../../shared/schemas/speech.js'

const port = parentPort
if (!port) throw new Error('worker.ts runs as a worker thread')

async function perform(task: SpeechTask): Promise<SpeechTaskResult> {
  if (task.job.kind === 'espeak-voices') return { voices: await listEspeakVoices(task.job.module) }
  const job: Exclude<SpeechJob, { kind: 'espeak-voices' }> = task.job
  const pcm = job.kind === 'flite' ? synthesizeFlite(job.text, job.voice) : await synthesizeEspeak(job)
  if (pcm.samples.length === 0) throw new SpeechRefusal(400, 'text has nothing to speak')
  const seconds = pcm.samples.length / pcm.sampleRate
  if (seconds * 1000 > SPEECH_AUDIO_MAX_MS) {
    throw new SpeechRefusal(413, `the speech would last ${Math.round(seconds)} s, more than the ${SPEECH_AUDIO_MAX_MS / 1000} s limit: send less text${job.kind === 'espeak' ? ' or a higher speed' : ''}`)
  }
  return { audio: encodeAudio(pcm, task.format ?? 'wav') }
}

serveJobs<SpeechTask, SpeechTaskResult>(port, perform, {
  transfer: (result) => (result.audio ? [result.audio.data] : []),
  refusal: (error) => (error instanceof SpeechRefusal ? { status: error.status, message: error.message } : null),
})
