/**
 * OpenAI's audio endpoints through the gateway, to the OpenAI-compatible provider serving the
 * model (keys, budgets, retries, fallbacks, usage as every gateway call):
 * - `POST /v1/audio/speech`: JSON in; the audio is streamed back as the provider sends it (at
 *   most SPEECH_LIMIT), its first bytes awaited inside the retry loop.
 * - `POST /v1/audio/transcriptions`: a multipart form. The file (at most TRANSCRIPTION_FILE_LIMIT,
 *   OpenAI's own limit) is spooled to a temporary file as it arrives, then streamed from there to
 *   the provider (again to a fallback), and deleted once the call ends; the other fields are read
 *   into memory (bounded). The answer is passed on as the provider wrote it: JSON, text, subtitles,
 *   or events with `stream=true`.
 */
import { createWriteStream, openAsBlob } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Busboy, type BusboyHeaders } from '@fastify/busboy'
import { TRPCError } from '@trpc/server'
import type { ChatUsage } from '../../../shared/schemas/chat.js'
import { audioSpeechInput, audioTranscriptionFields } from '../../../shared/schemas/gateway-apis.js'
import { readJson, sendJson, writeStreamed } from '../../http.js'
import { discardBody } from '../../rest/uploads.js'
import { EVENT_STREAM_HEADERS, gatewayHandler, upstreamHeaders, writeEvent, type CallResult } from '../call.js'
import { ClientAbortError, UpstreamError } from '../errors.js'
import { openaiHeaders } from '../providers/openai.js'
import { openaiCompatible } from './embeddings.js'

/** Audio streamed back, at most. */
const SPEECH_LIMIT = 64 * 1024 * 1024
/** OpenAI's limit for an audio file to transcribe. */
export const TRANSCRIPTION_FILE_LIMIT = 25 * 1024 * 1024
/** A transcript (JSON, text or subtitles), at most. */
const TRANSCRIPT_LIMIT = 16 * 1024 * 1024
const MiB = 1024 * 1024

const SPEECH_TYPES: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' }

function transcriptionUsage(raw: any): ChatUsage | undefined {
  if (raw?.type !== 'tokens') return undefined
  const count = (value: unknown) => (Number.isFinite(Number(value)) && Number(value) > 0 ? Math.floor(Number(value)) : 0)
  const prompt = count(raw.input_tokens)
  const completion = count(raw.output_tokens)
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: raw.total_tokens === undefined ? prompt + completion : count(raw.total_tokens) }
}

/** POST /v1/audio/speech */
export const handleSpeech = gatewayHandler(async ({ req }) => {
  const input = audioSpeechInput.parse(await readJson(req))
  return {
    model: input.model,
    async run({ gateway, signal, headers, exchange: { res } }): Promise<CallResult> {
      const { value, target } = await gateway.call(
        input.model,
        signal,
        async (attempt) => {
          const provider = attempt.target.provider
          const response = await attempt.request({ url: `${provider.baseUrl}/audio/speech`, headers: openaiHeaders(provider), body: { json: { ...input, model: attempt.target.model } } })
          const chunks = response.chunks(SPEECH_LIMIT)[Symbol.asyncIterator]()
          // The first bytes inside the retry loop: a provider that fails at once is retried, or its fallback tried.
          return { chunks, first: await chunks.next(), type: response.contentType, requestId: response.requestId }
        },
        { accepts: openaiCompatible, refusal: `The model "${input.model}" is served by an Anthropic provider here, which has no speech API.` },
      )
      const type = value.type && !/json|html|text\/plain/i.test(value.type) ? value.type : (SPEECH_TYPES[input.response_format ?? 'mp3'] ?? 'application/octet-stream')
      res.writeHead(200, { 'content-type': type, ...headers, ...upstreamHeaders(target.provider.name, value.requestId) })
      try {
        for (let next = value.first; !next.done; next = await value.chunks.next()) {
          if (res.destroyed) break
          await writeStreamed(res, next.value as unknown as string)
        }
      } catch (error) {
        if (!(error instanceof ClientAbortError)) gateway.failure(error)
        res.destroy()
        return { failed: !(error instanceof ClientAbortError) }
      } finally {
        if (res.destroyed) await value.chunks.return?.()
      }
      res.end()
      return { failed: false }
    },
  }
}, 'openai')

interface SpooledForm {
  fields: Record<string, string>
  file: { path: string; name: string; type: string }
  dispose(): Promise<void>
}

const badForm = (detail: string) => new TRPCError({ code: 'BAD_REQUEST', message: `${detail}: send multipart/form-data with the audio in the field "file" and the model in "model"` })

/** Reads the form: its fields into memory, its `file` into a temporary file (bounded); refuses a form without a file. */
async function spoolForm(req: IncomingMessage): Promise<SpooledForm> {
  if (Number(req.headers['content-length']) > TRANSCRIPTION_FILE_LIMIT + MiB) {
    throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `file: the audio is larger than ${TRANSCRIPTION_FILE_LIMIT / MiB} MiB` })
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'plaza-transcribe-'))
  const dispose = () => rm(dir, { recursive: true, force: true })
  try {
    const fields: Record<string, string> = {}
    let file: SpooledForm['file'] | undefined
    let parser
    try {
      parser = new Busboy({ headers: req.headers as BusboyHeaders, limits: { fileSize: TRANSCRIPTION_FILE_LIMIT, files: 1, fields: 32, fieldSize: 64 * 1024, parts: 40 } })
    } catch {
      throw badForm('The request is not multipart form data')
    }
    const writes: Promise<void>[] = []
    await new Promise<void>((resolve, reject) => {
      parser.on('field', (name, value, nameTruncated, valueTruncated) => {
        if (valueTruncated || nameTruncated) return reject(badForm(`The field ${name} is longer than 64 KiB`))
        fields[name] = value
      })
      parser.on('file', (name, stream, filename, _encoding, mimetype) => {
        stream.on('error', () => {})
        if (name !== 'file' || file) return void stream.resume()
        file = { path: path.join(dir, 'audio'), name: path.basename(filename || 'audio').slice(0, 200) || 'audio', type: mimetype || 'application/octet-stream' }
        stream.on('limit', () => {
          const tooLarge = new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `file: the audio is larger than ${TRANSCRIPTION_FILE_LIMIT / MiB} MiB` })
          stream.destroy(tooLarge)
          reject(tooLarge)
        })
        const written = pipeline(stream, createWriteStream(file.path))
        // Awaited below once the form has ended; a failure before then is the form's (reported by `reject`).
        written.catch(() => {})
        writes.push(written)
      })
      parser.on('finish', () => resolve())
      parser.on('error', (error: unknown) => reject(badForm(`The multipart form could not be read (${(error as Error)?.message ?? error})`)))
      req.on('close', () => {
        if (!req.complete) reject(new ClientAbortError())
      })
      req.pipe(parser)
    })
    try {
      await Promise.all(writes)
    } catch (error) {
      throw error instanceof TRPCError ? error : badForm(`The multipart form could not be read (${(error as Error)?.message ?? error})`)
    }
    if (!file) throw badForm('No file was sent')
    return { fields, file, dispose }
  } catch (error) {
    await dispose()
    discardBody(req)
    throw error
  }
}

/** POST /v1/audio/transcriptions */
export const handleTranscription = gatewayHandler(async ({ req, query }) => {
  const form = await spoolForm(req)
  // The fields may come in the query too, as the catalog's other forms take theirs; the form's win.
  form.fields = { ...query, ...form.fields }
  let parsed
  try {
    parsed = audioTranscriptionFields.parse(form.fields)
  } catch (error) {
    await form.dispose()
    throw error
  }
  const input = parsed
  return {
    model: input.model,
    release: form.dispose,
    async run({ gateway, signal, headers, exchange: { res } }): Promise<CallResult> {
      const { value, target } = await gateway.call(
        input.model,
        signal,
        async (attempt) => {
          const provider = attempt.target.provider
          const { FormData } = await import('undici')
          const body = new FormData()
          for (const [name, field] of Object.entries(form.fields)) if (name !== 'model') body.append(name, field)
          body.append('model', attempt.target.model)
          // From the disk, each attempt anew (the blob is read as it is sent).
          body.append('file', await openAsBlob(form.file.path, { type: form.file.type }), form.file.name)
          const response = await attempt.request({ url: `${provider.baseUrl}/audio/transcriptions`, headers: openaiHeaders(provider), body: { form: body } })
          if (/event-stream/i.test(response.contentType)) {
            const events = response.events()[Symbol.asyncIterator]()
            return { kind: 'events' as const, events, first: await events.next(), requestId: response.requestId }
          }
          return { kind: 'whole' as const, bytes: await response.bytes(TRANSCRIPT_LIMIT), type: response.contentType, requestId: response.requestId }
        },
        { accepts: openaiCompatible, refusal: `The model "${input.model}" is served by an Anthropic provider here, which has no transcriptions API.` },
      )
      // The provider has the file: no retry or fallback will send it again.
      await form.dispose()
      const answerHeaders = { ...headers, ...upstreamHeaders(target.provider.name, value.requestId) }
      if (value.kind === 'whole') {
        const json = /json/i.test(value.type)
        let usage: ChatUsage | undefined
        if (json) {
          try {
            usage = transcriptionUsage(JSON.parse(value.bytes.toString('utf8'))?.usage)
          } catch {
            throw new UpstreamError('protocol', `provider "${target.provider.name}" answered with something that is not JSON`)
          }
        }
        return {
          usage,
          cost: gateway.cost(target, usage),
          failed: false,
          respond: () => {
            res.writeHead(200, { 'content-type': json ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8', 'content-length': value.bytes.length, ...answerHeaders })
            res.end(value.bytes)
          },
        }
      }
      // stream=true: the provider's events (transcript.text.delta ... transcript.text.done, which carries the usage), passed on.
      res.writeHead(200, { ...EVENT_STREAM_HEADERS, ...answerHeaders })
      let usage: ChatUsage | undefined
      try {
        for (let next = value.first; !next.done; next = await value.events.next()) {
          if (res.destroyed) break
          const { event, data } = next.value
          if (data.includes('"usage"')) {
            try {
              usage = transcriptionUsage(JSON.parse(data)?.usage) ?? usage
            } catch {
              // passed on as it is; the client reads what the provider sent
            }
          }
          await writeEvent(res, data, event)
        }
      } catch (error) {
        if (error instanceof ClientAbortError || res.destroyed) return { usage, failed: false }
        res.destroy()
        return { usage, failed: true }
      } finally {
        await value.events.return?.()
      }
      res.end()
      return { usage, cost: gateway.cost(target, usage), failed: false }
    },
  }
}, 'openai')
