/** A speech worker: runs synthesis and encoding jobs one at a time, off the server's event loop. */
import { parentPort } from 'node:worker_threads'
import { listEspeakVoices, SpeechRefusal, synthesizeEspeak, synthesizeFlite, type SpeechJob } from './engines.js'
import { encodeAudio } from './pcm.js'
import type { SpeechTask, SpeechTaskResult } from './pool.js'

const port = parentPort
if (!port) throw new Error('worker.ts runs as a worker thread')

async function perform(task: SpeechTask): Promise<SpeechTaskResult> {
  if (task.job.kind === 'espeak-voices') return { voices: await listEspeakVoices(task.job.module) }
  const job: Exclude<SpeechJob, { kind: 'espeak-voices' }> = task.job
  const pcm = job.kind === 'flite' ? synthesizeFlite(job.text, job.voice) : await synthesizeEspeak(job)
  if (pcm.samples.length === 0) throw new SpeechRefusal(400, 'text has nothing to speak')
  return { audio: encodeAudio(pcm, task.format ?? 'wav') }
}

port.on('message', async ({ id, task }: { id: number; task: SpeechTask }) => {
  try {
    const result = await perform(task)
    port.postMessage({ id, result }, result.audio ? [result.audio.data.buffer as ArrayBuffer] : [])
  } catch (error) {
    const refusal = error instanceof SpeechRefusal ? { status: error.status, message: error.message } : null
    port.postMessage({ id, refusal, error: refusal ? undefined : String((error as Error)?.stack ?? error) })
  }
})
