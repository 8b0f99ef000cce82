/**
 * `plaza api`: one HTTP request to any REST path of the server (`/api/mobile/…`, `/api/…`), with the
 * stored session's token, as `gh api` does. Remote: to `--url`. Embedded: the same HTTP app the
 * server runs, on a loopback listener at an ephemeral port that lives only for this request (no
 * half-built request objects: the app sees a real HTTP request, headers, body limits and all).
 */
import { createReadStream } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { remoteFetch, unreachable, UsageError, type Target } from './client.js'

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
/** The largest JSON answer read into memory (other answers stream straight to stdout). */
export const JSON_ANSWER_LIMIT = 32 * 1024 * 1024

/** The most a request body or field read from stdin may be: no server route takes more in one JSON body. */
export const STDIN_LIMIT = 32 * 1024 * 1024

/** Reads `stream` (stdin) as text, refusing more than `limit` bytes with a usage error. */
export async function readInput(stream: AsyncIterable<Uint8Array | string>, limit = STDIN_LIMIT): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk)
    size += bytes.byteLength
    if (size > limit) throw new UsageError(`stdin holds more than ${limit / 1024 / 1024} MiB; send a file that large with --input FILE`)
    chunks.push(bytes)
  }
  return Buffer.concat(chunks).toString('utf8')
}

export type FieldValue = string | number | boolean | null | FieldValue[]
export type Fields = Record<string, FieldValue>

/** `key=value` pairs: -f keeps strings; -F reads `true`/`false`/`null`/integers as such and `@file` (`@-`: stdin) as the file's text. */
export async function parseFields(raw: string[], typed: string[], stdin: () => Promise<string>): Promise<Fields> {
  // No prototype: a key named __proto__ or constructor is a field like any other.
  const fields: Fields = Object.create(null)
  const put = (key: string, value: FieldValue) => {
    if (key.endsWith('[]')) {
      const name = key.slice(0, -2)
      const list = fields[name]
      fields[name] = Array.isArray(list) ? [...list, value] : [value]
    } else fields[key] = value
  }
  const split = (pair: string, flag: string) => {
    const at = pair.indexOf('=')
    if (at <= 0) throw new UsageError(`${flag} takes key=value, not "${pair}"`)
    return [pair.slice(0, at), pair.slice(at + 1)] as const
  }
  for (const pair of raw) put(...split(pair, '-f'))
  for (const pair of typed) {
    const [key, value] = split(pair, '-F')
    if (value.startsWith('@')) put(key, await readText(value.slice(1), stdin))
    else if (value === 'true' || value === 'false') put(key, value === 'true')
    else if (value === 'null') put(key, null)
    else if (/^-?\d{1,15}$/.test(value)) put(key, Number(value))
    else put(key, value)
  }
  return fields
}

async function readText(file: string, stdin: () => Promise<string>): Promise<string> {
  if (file === '-') return stdin()
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`)
  }
}

/** METHOD and PATH from the arguments (`api PATH` or `api METHOD PATH`) and -X. */
export function requestLine(first: string, second: string | undefined, methodFlag: string | undefined, hasBody: boolean): { method: string; path: string } {
  let method = methodFlag?.toUpperCase()
  let target = first
  if (second !== undefined) {
    if (method) throw new UsageError('give the method either as an argument or with --method, not both')
    method = first.toUpperCase()
    target = second
  }
  method ??= hasBody ? 'POST' : 'GET'
  if (!(METHODS as readonly string[]).includes(method)) throw new UsageError(`unknown method "${method}": one of ${METHODS.join(', ')}`)
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) {
    throw new UsageError(`PATH is a path on the server (e.g. /api/mobile/posts/feed), not "${target}"; pick the server with --url`)
  }
  return { method, path: target.startsWith('/') ? target : `/${target}` }
}

export interface ApiRequest {
  method: string
  path: string
  headers: Record<string, string>
  /** JSON fields: the query string for GET/HEAD (and with --input), else the JSON body. */
  fields: Fields
  /** --input FILE, or its text when it came from stdin: the body as given. */
  input?: { file: string } | { text: string }
}

export interface ApiAnswer {
  status: number
  statusText: string
  headers: Array<[string, string]>
  /** Parsed JSON when the answer is JSON. */
  json?: unknown
  /** Otherwise the raw body, streamed. */
  stream?: Readable
}

function withQuery(path: string, fields: Fields): string {
  const entries = Object.entries(fields)
  if (entries.length === 0) return path
  const query = new URLSearchParams()
  for (const [key, value] of entries) for (const item of Array.isArray(value) ? value : [value]) query.append(key, item === null ? '' : String(item))
  return path + (path.includes('?') ? '&' : '?') + query.toString()
}

async function body(request: ApiRequest): Promise<{ path: string; body?: BodyInit | Readable; type?: string }> {
  if (request.input !== undefined) {
    const path = withQuery(request.path, request.fields)
    if ('text' in request.input) return { path, body: request.input.text, type: 'application/json' }
    const { file } = request.input
    try {
      if (!(await stat(file)).isFile()) throw new UsageError(`${file} is not a file`)
    } catch (error) {
      if (error instanceof UsageError) throw error
      throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`)
    }
    return { path, body: createReadStream(file), type: 'application/json' }
  }
  if (request.method === 'GET' || request.method === 'HEAD' || Object.keys(request.fields).length === 0) return { path: withQuery(request.path, request.fields) }
  return { path: request.path, body: JSON.stringify(request.fields), type: 'application/json' }
}

/** Reads a JSON answer, refusing one larger than JSON_ANSWER_LIMIT. */
async function readBounded(stream: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    size += chunk.byteLength
    if (size > JSON_ANSWER_LIMIT) throw new Error(`the answer is larger than ${JSON_ANSWER_LIMIT / 1024 / 1024} MiB`)
    chunks.push(Buffer.from(chunk))
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Sends the request to `origin` (a server, or the embedded app's loopback listener); `consume` sees the answer before the connection goes. */
async function send<T>(origin: string, request: ApiRequest, consume: (answer: ApiAnswer) => Promise<T>): Promise<T> {
  const prepared = await body(request)
  const headers: Record<string, string> = { accept: 'application/json, */*', ...lower(request.headers) }
  if (prepared.type && !headers['content-type']) headers['content-type'] = prepared.type
  let response: Awaited<ReturnType<typeof remoteFetch>>
  try {
    response = await remoteFetch(origin + prepared.path, {
      method: request.method,
      headers,
      body: prepared.body as never,
      ...(prepared.body instanceof Readable ? { duplex: 'half' } : {}),
    })
  } catch (error) {
    throw unreachable(origin, error)
  }
  const answer: ApiAnswer = { status: response.status, statusText: response.statusText, headers: [...response.headers] }
  if (response.body && /\bjson\b/i.test(response.headers.get('content-type') ?? '')) {
    const text = await readBounded(response.body)
    try {
      answer.json = JSON.parse(text)
    } catch {
      answer.stream = Readable.from([text])
    }
  } else if (response.body) answer.stream = Readable.fromWeb(response.body as never)
  return consume(answer)
}

const lower = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]))

/** Runs one request against the target; embedded, the server's app answers on a loopback port closed right after. */
export async function apiRequest<T>(target: Target, request: ApiRequest, consume: (answer: ApiAnswer) => Promise<T>): Promise<T> {
  if (target.kind === 'remote') return send(target.url, request, consume)
  const [{ createServices }, { loadConfig }, { createApp }, { createLogger, silentLogger }] = await Promise.all([
    import('../server/services.js'),
    import('../server/config.js'),
    import('../server/app.js'),
    import('../server/logger.js'),
  ])
  const config = loadConfig({ dataDir: target.dataDir, rateLimits: false })
  const logger = createLogger()
  const services = await createServices(config, { logger: { ...silentLogger, error: logger.error }, maintenance: false, readers: false })
  const app = createApp(services)
  try {
    const address = await app.listen(0, '127.0.0.1')
    return await send(`http://127.0.0.1:${address.port}`, request, consume)
  } finally {
    // The answer is read: the kept-alive connection has nothing more to carry.
    app.server.closeAllConnections()
    // Lets the request finish, then closes the listener and the services.
    await app.close()
  }
}

/** -H 'Name: value' */
export function parseHeaders(values: string[]): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const value of values) {
    const at = value.indexOf(':')
    if (at <= 0) throw new UsageError(`-H takes "Name: value", not "${value}"`)
    headers[value.slice(0, at).trim()] = value.slice(at + 1).trim()
  }
  return headers
}
