/**
 * Records every answer a test server gives (method, path, status, Content-Type and a JSON body), so
 * that the suite's own requests are checked against the published OpenAPI document once the run is
 * over (test/run.ts, then test/server/recorded-answers.ts). On only when the runner names a
 * directory in `PLAZA_TEST_ANSWERS_DIR`: each test process writes its answers to a file of its own
 * there when it exits.
 */
import { appendFileSync } from 'node:fs'
import type http from 'node:http'
import path from 'node:path'

export interface RecordedAnswer {
  method: string
  path: string
  status: number
  contentType: string
  /** The body as text when it is JSON and at most MAX_BODY bytes; else ''. */
  body: string
  /** True when a JSON body was longer than MAX_BODY, or never finished (it is then not recorded). */
  truncated: boolean
  /** The test file that made the request. */
  file: string
}

const MAX_BODY = 256 * 1024
const pending: RecordedAnswer[] = []

const directory = process.env.PLAZA_TEST_ANSWERS_DIR

/** The file under test, as the runner passes it (`--one FILE`). */
const testFile = () => {
  const at = process.argv.indexOf('--one')
  return at >= 0 ? path.relative(process.cwd(), process.argv[at + 1]) : path.relative(process.cwd(), process.argv[1] ?? '')
}

let flushing = false
function flushOnExit() {
  if (flushing || !directory) return
  flushing = true
  process.once('exit', () => {
    if (pending.length === 0) return
    appendFileSync(path.join(directory, `${process.pid}.jsonl`), pending.map((answer) => JSON.stringify(answer)).join('\n') + '\n')
  })
}

/** Records the answers `server` gives from now on (nothing when recording is off). */
export function recordAnswers(server: http.Server): void {
  if (!directory) return
  flushOnExit()
  const file = testFile()
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = []
    let size = 0
    let answer: RecordedAnswer | undefined
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
      size += buffer.length
      if (size <= MAX_BODY) chunks.push(buffer)
    }
    // The head is recorded when it is written (an event stream never finishes); the body when the answer does.
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => http.ServerResponse
    res.writeHead = ((...args: unknown[]) => {
      const result = writeHead(...args)
      const contentType = String(res.getHeader('content-type') ?? '')
      const json = /json/i.test(contentType) && !/gzip|br|deflate/i.test(String(res.getHeader('content-encoding') ?? ''))
      answer = { method: req.method ?? 'GET', path: req.url ?? '/', status: res.statusCode, contentType, body: '', truncated: json, file }
      pending.push(answer)
      return result
    }) as typeof res.writeHead
    const write = res.write.bind(res) as (...args: unknown[]) => boolean
    const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse
    res.write = ((...args: unknown[]) => {
      keep(args[0], args[1])
      return write(...args)
    }) as typeof res.write
    res.end = ((...args: unknown[]) => {
      keep(args[0], args[1])
      return end(...args)
    }) as typeof res.end
    // One listener, on `finish` (a response's `close` already has several).
    res.once('finish', () => {
      if (!answer?.truncated || size > MAX_BODY) return
      answer.body = Buffer.concat(chunks).toString('utf8')
      answer.truncated = false
    })
  })
}
