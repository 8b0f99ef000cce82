/**
 * The REST adapter: a route table maps a documented method and path onto a tRPC procedure
 * (or, for multipart, binary and streamed answers, onto a handler), turns path, query and body
 * into the procedure's input, and wraps the result in the envelope. It holds no business logic.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { TRPCError } from '@trpc/server'
import type { z } from 'zod'
import { anthropicErrorBody, errorFormatOf, OPENAI_ERROR_TYPES, toPublicError, type ErrorCases } from '../errors.js'
import { discardBody, DRAIN_LIMIT, readJson, sendError, sendJson, sendSuccess, JSON_BODY_LIMIT } from '../http.js'
import { setRoute } from '../request-log.js'
import { createCaller } from '../router.js'
import { enforceRateLimit, type Context } from '../trpc.js'
import { heavyUnits, type HeavyCost } from '../heavy-costs.js'
import { objectFields, procedureFields } from './input-fields.js'

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'

export interface RestRequest {
  params: Record<string, string>
  query: Record<string, string>
  body: Record<string, unknown>
}

/** What a handler route gets: the raw exchange plus the parsed path and query. */
export interface Exchange {
  req: IncomingMessage
  res: ServerResponse
  ctx: Context
  params: Record<string, string>
  query: Record<string, string>
}

interface RouteBase {
  method: Method
  /** The documented path; `:name` is a segment, `:name?` an optional last segment. */
  path: string
  /** One line for the OpenAPI document and the reference page. */
  summary?: string
  /** The shape of the envelope's `data` on success, for the OpenAPI document (a test checks real answers against it). */
  output?: z.ZodType
  /** The area the OpenAPI document and the reference page group it under (default: the path's first segment). */
  tag?: string
  /**
   * Error statuses the route answers beyond those its shape implies (input, token, path parameters,
   * body), for the OpenAPI document; a procedure route adds its procedure's `meta.errors`.
   */
  errors?: ErrorCases
}

export interface ProcedureRoute extends RouteBase {
  /** Dotted procedure path in the app router, e.g. `auth.login`. */
  procedure: string
  /** Builds the procedure input; by default query, body and path parameters merged (path wins). */
  input?: (request: RestRequest) => unknown
  /** HTTP status on success (default 200). */
  status?: number
  /** The envelope's `message` on success; a function of the answer's `data` when it depends on it. */
  message?: string | ((data: any) => string)
  /** Largest JSON body accepted (default 1 MiB). */
  bodyLimit?: number
  /** A DELETE that reads its JSON body (DELETE /user/account takes the password); other DELETEs ignore theirs. */
  deleteWithBody?: boolean
}

/**
 * What a handler answers on success, for the OpenAPI document (image and audio also as JSON on
 * `Accept: application/json`). `page`: an HTML page at the bare path, its script at the optional
 * last segment (`/docs/:asset?`).
 */
export type AnswerKind = 'json' | 'image' | 'audio' | 'text' | 'page' | 'redirect' | 'event-stream'

/**
 * A handler reads the raw request, so the OpenAPI document cannot learn its input from a procedure:
 * these optional fields describe it (procedure routes are described by their procedure).
 */
export interface HandlerRoute extends RouteBase {
  handle: (exchange: Exchange) => Promise<void>
  /** The zod schema the handler validates its path and query (GET) or JSON body (otherwise) with. */
  request?: z.ZodType
  /** The form field of a `multipart/form-data` upload that carries the file. */
  multipart?: string
  answers?: AnswerKind
  /** HTTP status on success (default 200). */
  status?: number
  /** The token the handler takes (see HandlerAuth). */
  auth?: HandlerAuth
  /** A costly operation: each call counts this in the `heavy` class, per client address, before the handler runs. */
  cost?: HeavyCost
}

/**
 * `bearer`: a session token, required (the handler calls `requireSession`). `gateway-key`: a key
 * of the chat gateway, required once the operator has created any (`authorizeGatewayCall`);
 * `premium-key`: a premium gateway key, always required. `metrics-token`: PLAZA_METRICS_TOKEN,
 * required when the server was given one.
 */
export type HandlerAuth = 'bearer' | 'gateway-key' | 'premium-key' | 'metrics-token'

export type Route = ProcedureRoute | HandlerRoute

interface CompiledRoute {
  route: Route
  pattern: RegExp
  names: string[]
  /** Per segment of the path, whether it is fixed text (not a `:name`). */
  literal: boolean[]
  /** The input's fields (null: not known, so any segment fits a parameter and no body id is refused). */
  fields: Record<string, z.ZodType> | null
}

function compile(route: Route): CompiledRoute {
  const names: string[] = []
  const segments = route.path.split('/').filter(Boolean)
  const source = segments
    .map((segment) => {
      const param = /^:(\w+)(\?)?$/.exec(segment)
      if (!param) return '/' + segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      names.push(param[1])
      return param[2] ? '(?:/([^/]+))?' : '/([^/]+)'
    })
    .join('')
  const fields = 'procedure' in route ? procedureFields(route.procedure) : objectFields(route.request)
  return { route, pattern: new RegExp(`^${source}/?$`), names, literal: segments.map((segment) => !segment.startsWith(':')), fields }
}

function defaultInput({ params, query, body }: RestRequest): unknown {
  return { ...query, ...body, ...params }
}

function callProcedure(ctx: Context, dotted: string, input: unknown): Promise<unknown> {
  let target: unknown = createCaller(ctx)
  for (const key of dotted.split('.')) target = (target as Record<string, unknown>)[key]
  if (typeof target !== 'function') throw new Error(`route table names an unknown procedure: ${dotted}`)
  return (target as (input: unknown) => Promise<unknown>)(input)
}

/** Errors that only say the client went away (or was cut off by a timeout): the access log's 499 line is all they need. */
function isClientGone(req: IncomingMessage, error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException)?.code
  // A socket already torn down is gone too (a destroyed request lets go of its socket: `req.socket` is then null).
  return !req.socket || req.socket.destroyed || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (error as Error)?.message === 'aborted'
}

/**
 * Answers an error in the envelope (OpenAI's or Anthropic's shape under their paths, errorFormatOf);
 * the detail of an unexpected one goes to the log only. When the request's body has not all arrived,
 * the connection is closed after the answer rather than read on for nothing.
 */
export function sendRouteError(exchange: Pick<Exchange, 'req' | 'res' | 'ctx'>, error: unknown) {
  const { res, req, ctx } = exchange
  if (res.headersSent || isClientGone(req, error)) {
    res.destroy()
    return
  }
  const failure = toPublicError(error)
  if (failure.unexpected) {
    ctx.services.logger.error('request failed', { method: req.method, route: req.url?.split('?')[0], error: String((error as Error)?.stack ?? error) })
  }
  const headers: Record<string, string> = failure.retryAfter ? { 'retry-after': String(failure.retryAfter) } : {}
  // A body still arriving when the answer is decided: one refused for its size (413, or declared past
  // DRAIN_LIMIT) is not read on for nothing, and the connection ends after the answer; any other (a
  // 401, 415 or 429 answered before it was read) is read and dropped while the answer goes out, so a
  // client still sending gets the answer rather than a reset (Node 24's fetch fails the whole request on one).
  if (!req.complete) {
    if (failure.status === 413 || Number(req.headers['content-length']) > DRAIN_LIMIT) headers.connection = 'close'
    else discardBody(req)
  }
  const format = errorFormatOf(req.url ?? '')
  if (format === 'anthropic') return sendJson(res, failure.status, anthropicErrorBody(failure.status, failure.message), headers)
  if (format === 'openai') {
    const [type, code] = OPENAI_ERROR_TYPES[failure.status] ?? ['server_error', 'server_error']
    return sendJson(res, failure.status, { error: { message: failure.message, type, code, param: null } }, headers)
  }
  sendError(res, failure.status, failure.message, headers, ctx.services.clock())
}

export interface RestHandler {
  /** Handles `pathname` (relative to the mount) if a route knows it; false when no route's path matches. */
  (req: IncomingMessage, res: ServerResponse, pathname: string, ctx: Context, mount: string): Promise<boolean>
}

interface Match {
  c: CompiledRoute
  params: Record<string, string>
}

/** The path parameters a route's pattern captured, decoded. */
function paramsOf(c: CompiledRoute, found: RegExpExecArray): Record<string, string> {
  const params: Record<string, string> = {}
  c.names.forEach((name, i) => {
    const value = found[i + 1]
    if (value !== undefined) params[name] = decodeURIComponent(value)
  })
  return params
}

/** Whether every parameter is a value the route's input takes for it: `feed` is not a `post_id`. */
function fits({ c, params }: Match): boolean {
  return Object.entries(params).every(([name, value]) => c.fields?.[name]?.safeParse(value).success ?? true)
}

/** Which of two routes matching one path is more specific: fixed text beats a parameter, leftmost first. */
function compareSpecificity(a: CompiledRoute, b: CompiledRoute, segments: number): number {
  for (let i = 0; i < segments; i++) if (a.literal[i] !== b.literal[i]) return a.literal[i] ? 1 : -1
  return 0
}

/**
 * The routes `pathname` names (its resource) and the one serving `method`. A path belongs to the
 * routes whose parameters it fits, the most specific of them: `/posts/feed` is the feed's path
 * (GET), not a post's (DELETE, PUT), and `/posts/nope` is no path at all. A path that fits no route
 * but has the shape of one for `method` goes to that route all the same, whose validation says
 * what is wrong with it (`DELETE /posts/nope`: `post_id must be a number`). Null: no route knows
 * the path (a 404).
 */
function match(compiled: CompiledRoute[], method: string, pathname: string): { hit: Match | null; resource: Match[] } | null {
  const found: Match[] = []
  for (const c of compiled) {
    const result = c.pattern.exec(pathname)
    if (result) found.push({ c, params: paramsOf(c, result) })
  }
  const segments = pathname.split('/').filter(Boolean).length
  const fitting = found.filter(fits)
  const resource = fitting.filter((m) => fitting.every((other) => compareSpecificity(m.c, other.c, segments) >= 0))
  // HEAD is GET without the body (node drops it), as every route that answers GET answers HEAD (RFC 9110 §9.3.2).
  const wanted = method === 'HEAD' ? 'GET' : method
  const hit = (resource.length > 0 ? resource : found).find((m) => m.c.route.method === wanted) ?? null
  if (!hit && resource.length === 0) return null
  return { hit, resource }
}

/** The `Allow` of a path whose routes serve `methods`: each once, in order, HEAD beside GET. */
export function allowOf(methods: string[]): string {
  return [...new Set(methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method])))].join(', ')
}

/** A body field named as an id (`id`, `post_id`): never silently ignored, since a client sending one means a target. */
const ID_FIELD = /^(?:id|\w+_id)$/

/**
 * Refuses (400) a body's id that the route would not apply, naming the field and where it goes: a
 * path parameter of the route goes in the path (the same value in both is harmless); any other id
 * the route's input does not take is refused, since the route acts on what its path, or the
 * caller's session, names. Other unknown fields stay ignored: apps of other versions send them.
 */
function refuseIds(route: ProcedureRoute, c: CompiledRoute, mount: string, params: Record<string, string>, body: Record<string, unknown>) {
  const where = `${route.method} ${mount}${route.path.replace(/:(\w+)\??/g, '{$1}')}`
  for (const [name, value] of Object.entries(body)) {
    if (!ID_FIELD.test(name) || value === undefined) continue
    if (c.names.includes(name)) {
      if (params[name] === undefined) throw new TRPCError({ code: 'BAD_REQUEST', message: `${name} goes in the path, not the body: ${where}` })
      if (String(value) !== params[name]) throw new TRPCError({ code: 'BAD_REQUEST', message: `${name} in the body (${JSON.stringify(value)}) is not the one in the path (${params[name]}); ${where} acts on the path's` })
      continue
    }
    if (c.fields && !(name in c.fields)) {
      const acts = c.names.length > 0 ? `it acts on what its path names ({${c.names.join('}, {')}})` : 'it acts for the signed-in caller'
      throw new TRPCError({ code: 'BAD_REQUEST', message: `${name} cannot be applied by ${where}: ${acts}, and no route takes ${name} in its body` })
    }
  }
}

/** The query string's parameters (the last of a repeated name wins), as `new URL(url).searchParams` reads them. */
function queryOf(url: string): Record<string, string> {
  const mark = url.indexOf('?')
  if (mark < 0) return {}
  const hash = url.indexOf('#', mark)
  return Object.fromEntries(new URLSearchParams(url.slice(mark + 1, hash < 0 ? undefined : hash)))
}

/** A path's first segment (`posts` of `/posts/detail/7`); '' for `/`. */
function firstSegment(pathname: string): string {
  const end = pathname.indexOf('/', 1)
  return pathname.slice(1, end < 0 ? undefined : end)
}

/**
 * The routes a path could match, by its first segment: those whose path starts with that fixed
 * segment, and those that start with a parameter (or are `/`), in the table's order. A route's
 * pattern fixes its first segment, so match() finds the same routes among these as among all of
 * them, without trying some eighty patterns per request.
 */
function candidatesByFirstSegment(compiled: CompiledRoute[]): (pathname: string) => CompiledRoute[] {
  const fixed = compiled.map((c) => (c.literal[0] ? firstSegment(c.route.path) : null))
  const open = compiled.filter((_, i) => fixed[i] === null)
  const bySegment = new Map<string, CompiledRoute[]>()
  for (const segment of new Set(fixed)) {
    if (segment !== null) bySegment.set(segment, compiled.filter((_, i) => fixed[i] === segment || fixed[i] === null))
  }
  return (pathname) => bySegment.get(firstSegment(pathname)) ?? open
}

export function createRestHandler(routes: Route[]): RestHandler {
  const candidates = candidatesByFirstSegment(routes.map(compile))
  return async (req, res, pathname, ctx, mount) => {
    const method = (req.method ?? 'GET').toUpperCase()
    const matched = match(candidates(pathname), method, pathname)
    if (!matched) return false
    const { hit, resource } = matched
    setRoute(req, mount + (hit ?? resource[0]).c.route.path)
    try {
      if (!hit) {
        const allow = allowOf(resource.map((m) => m.c.route.method))
        res.setHeader('allow', allow)
        throw new TRPCError({ code: 'METHOD_NOT_SUPPORTED', message: `Method ${method} is not allowed here; use ${allow}` })
      }
      const { params } = hit
      const query = queryOf(req.url ?? '/')
      const route = hit.c.route
      if ('handle' in route) {
        if (route.cost) await enforceRateLimit(ctx, 'heavy', `ip:${ctx.clientAddress}`, heavyUnits(route.cost, req))
        await route.handle({ req, res, ctx, params, query })
        return true
      }
      const bodyless = method === 'GET' || method === 'HEAD' || (method === 'DELETE' && !route.deleteWithBody)
      const body = bodyless ? {} : await readJson(req, route.bodyLimit ?? JSON_BODY_LIMIT)
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw new TRPCError({ code: 'BAD_REQUEST', message: 'Request body must be a JSON object' })
      }
      refuseIds(route, hit.c, mount, params, body as Record<string, unknown>)
      const input = (route.input ?? defaultInput)({ params, query, body: body as Record<string, unknown> })
      const data = await callProcedure(ctx, route.procedure, input)
      const message = typeof route.message === 'function' ? route.message(data) : route.message
      sendSuccess(res, data ?? null, { status: route.status, message, now: ctx.services.clock() })
    } catch (error) {
      sendRouteError({ req, res, ctx }, error)
    }
    return true
  }
}
