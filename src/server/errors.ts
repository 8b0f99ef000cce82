import { TRPCError } from '@trpc/server'
import { ZodError } from 'zod'
import { isModuleLoadError, reportLoadFailure } from './load-failure.js'

/** HTTP status of each tRPC error code the API uses. */
export const HTTP_STATUS: Record<string, number> = {
  PARSE_ERROR: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_SUPPORTED: 405,
  TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE_CONTENT: 422,
  TOO_MANY_REQUESTS: 429,
  CLIENT_CLOSED_REQUEST: 499,
  INTERNAL_SERVER_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
}

export const GENERIC_ERROR_MESSAGE = 'Internal server error'

/**
 * Error statuses an operation can answer beyond those its shape implies (a body, a token, a path
 * parameter: catalog/system/openapi-document.ts derives those), each with when it happens. Declared
 * next to the code that throws them (`FETCH_ERRORS` in fetch-guard.ts, `PROVIDER_ERRORS`, ...), and
 * named by the procedures (`.meta({ errors })`) and routes that can reach that code: the OpenAPI
 * document lists them, and the suite fails on an answer whose status it does not list.
 */
export type ErrorCases = Readonly<Partial<Record<number, string>>>

/** Several sources' cases as one; a status two sources share says both whens, a line each. */
export function errorCases(...sources: Array<ErrorCases | undefined>): ErrorCases {
  const merged: Record<number, string> = {}
  for (const source of sources) {
    for (const [status, when] of Object.entries(source ?? {})) {
      const held = merged[Number(status)]
      merged[Number(status)] = held && !held.split('\n').includes(when!) ? `${held}\n${when}` : when!
    }
  }
  return merged
}

/**
 * Paths whose errors are OpenAI's `{error: {message, type, code, param}}` rather than the envelope,
 * so that OpenAI's client libraries read them: the OpenAI-compatible API (`/api/v1/...`) and the
 * second upstream's (`/api/inference/...`).
 */
export function isOpenAiPath(path: string): boolean {
  return /^\/api\/(?:v1|inference)\//.test(path)
}

/** How a path's errors are written: the envelope, OpenAI's `{error}`, or Anthropic's `{type: 'error', error}`. */
export type ErrorFormat = 'envelope' | 'openai' | 'anthropic'

/**
 * The error format of a request path (query string allowed): Anthropic's under its Messages API
 * (`/api/v1/messages`, which Anthropic's clients call), OpenAI's under the other OpenAI-compatible
 * paths (isOpenAiPath), the envelope elsewhere. The route's own errors and the refusals made before
 * its handler runs (a body too large, a bad token) use the same one.
 */
export function errorFormatOf(path: string): ErrorFormat {
  if (/^\/api\/v1\/messages(?:[/?]|$)/.test(path)) return 'anthropic'
  return isOpenAiPath(path) ? 'openai' : 'envelope'
}

/** Anthropic's error `type` by status (its API's errors page; its clients raise BadRequestError, AuthenticationError, ... from it); anything else is `api_error`. */
const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  503: 'overloaded_error',
}

/** Anthropic's error body for a status and message (also the data of its mid-stream `error` event). */
export function anthropicErrorBody(status: number, message: string) {
  return { type: 'error' as const, error: { type: ANTHROPIC_ERROR_TYPES[status] ?? 'api_error', message } }
}

/** OpenAI's error `type` and `code` by status, for errors that carry no gateway code of their own. */
export const OPENAI_ERROR_TYPES: Record<number, [type: string, code: string]> = {
  400: ['invalid_request_error', 'invalid_request'],
  404: ['invalid_request_error', 'not_found'],
  405: ['invalid_request_error', 'method_not_allowed'],
  413: ['invalid_request_error', 'request_too_large'],
  415: ['invalid_request_error', 'unsupported_media_type'],
  429: ['rate_limit_error', 'rate_limit_exceeded'],
}

/** toPublicError's 503s: any request that reaches the database (a rate-limit count, a session) or file storage. */
export const DATA_ERRORS: ErrorCases = {
  503: 'The database is busy or the file storage is unreachable; `Retry-After` says when to try again',
}

/** A rate-limit refusal; carries the seconds for `Retry-After`. */
export class RateLimitedError extends TRPCError {
  constructor(readonly retryAfter: number) {
    super({ code: 'TOO_MANY_REQUESTS', message: `Too many requests; try again in ${retryAfter} seconds` })
  }
}

/** Marks a password that did not match (login, password change, account deletion): a failed authentication, counted in the `auth` class. */
const WRONG_PASSWORD = Symbol.for('plaza.wrongPassword')

/** The error of a password that did not match: 401 at login, 403 for a signed-in caller. */
export function wrongPassword(code: 'UNAUTHORIZED' | 'FORBIDDEN', message: string): TRPCError {
  return Object.assign(new TRPCError({ code, message }), { [WRONG_PASSWORD]: true })
}

/** Whether `error` (or what a procedure's error wraps) is `wrongPassword`'s. */
export function isWrongPassword(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as Record<symbol, unknown>)[WRONG_PASSWORD] === true) return true
  }
  return false
}

/** True when `message` names `field` as a word of its own (`Unknown fontFamily "x"`, `backgroundColor: cannot read`). */
function names(message: string, field: string): boolean {
  return new RegExp(`(?:^|[^\\w.])${field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w])`).test(message)
}

/**
 * Reads zod issues as one sentence a client developer can act on: `field: problem; field: problem`.
 * A message that starts with its field, or names a top-level field anywhere, is kept as it is (no
 * `fontFamily: Unknown fontFamily "x"`); a nested field's path is kept for where it is.
 */
export function describeZodError(error: ZodError): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.join('.')
      const last = String(issue.path[issue.path.length - 1] ?? '')
      const named = issue.message.startsWith(last + ' ') || issue.message.startsWith(last + ':') || (issue.path.length === 1 && names(issue.message, last))
      if (!field || named) return issue.message
      return `${field}: ${issue.message}`
    })
    .join('; ')
}

/** By shape as well as class: a module loaded both as ESM and CJS (tsx under a CJS runner) has two classes of each. */
function isTRPCError(value: unknown): value is TRPCError {
  return value instanceof TRPCError || (value instanceof Error && value.name === 'TRPCError' && typeof (value as TRPCError).code === 'string')
}

function isZodError(value: unknown): value is ZodError {
  return value instanceof ZodError || (value instanceof Error && value.name === 'ZodError' && Array.isArray((value as ZodError).issues))
}

export interface PublicError {
  status: number
  code: string
  message: string
  retryAfter?: number
  /** True when the message is generic and the detail belongs in the log only. */
  unexpected: boolean
}

/** The object store failing (uploads/s3-storage.ts): by name, like the others, so no import pulls in its SDK. */
function isObjectStoreError(value: unknown): boolean {
  return value instanceof Error && value.name === 'ObjectStoreError'
}

/** What a client sees while the object store fails; the store's own answer goes to the log only. */
export const STORAGE_UNAVAILABLE_MESSAGE = 'File storage is unavailable right now; try again shortly'

/** What a client sees while the database cannot be reached (db/remote-error.ts's DatabaseUnavailableError). */
export const DATABASE_UNAVAILABLE_MESSAGE = 'The database is unavailable right now; try again shortly'

/** The database unreachable: known by name (and looked for among causes: drizzle wraps the driver's error), so no import pulls in db/. */
function isDatabaseUnavailable(value: unknown): boolean {
  for (let error = value, depth = 0; error && depth < 4; error = (error as { cause?: unknown }).cause, depth++) {
    if (error instanceof Error && error.name === 'DatabaseUnavailableError') return true
  }
  return false
}

/** What a client sees when the database's write lock could not be had in time (writeTransaction's retries included). */
export const DATABASE_BUSY_MESSAGE = 'The database is busy; try again shortly'

/**
 * The database refusing for its write lock (SQLITE_BUSY, "database is locked"): another writer held
 * it past the wait, on a local file or a libsql server (drizzle wraps the driver's error as `cause`).
 */
function isDatabaseBusy(value: unknown): boolean {
  for (let error = value, depth = 0; error && depth < 4; error = (error as { cause?: unknown }).cause, depth++) {
    const { code, message } = error as { code?: unknown; message?: unknown }
    if (code === 'SQLITE_BUSY' || (typeof message === 'string' && /^(?:SQLITE_BUSY\b|database is locked$)/.test(message))) return true
  }
  return false
}

/** What a client sees when this process failed to load a module and is about to be replaced. */
export const RESTARTING_MESSAGE = 'The server is restarting after an update; try again shortly'

/**
 * Turns anything thrown by a procedure or route into what a client may see. A module that failed
 * to load is a 503 and retires the process (load-failure.ts): every answer to a failed request
 * passes through here.
 */
export function toPublicError(error: unknown): PublicError {
  if (isModuleLoadError(error)) {
    reportLoadFailure(error)
    return { status: 503, code: 'SERVICE_UNAVAILABLE', message: RESTARTING_MESSAGE, retryAfter: 1, unexpected: true }
  }
  const cause = isTRPCError(error) ? error.cause : undefined
  if (isObjectStoreError(error) || isObjectStoreError(cause)) {
    return { status: 503, code: 'SERVICE_UNAVAILABLE', message: STORAGE_UNAVAILABLE_MESSAGE, retryAfter: 5, unexpected: true }
  }
  if (isDatabaseUnavailable(error)) return { status: 503, code: 'SERVICE_UNAVAILABLE', message: DATABASE_UNAVAILABLE_MESSAGE, retryAfter: 2, unexpected: true }
  if (isDatabaseBusy(error)) return { status: 503, code: 'SERVICE_UNAVAILABLE', message: DATABASE_BUSY_MESSAGE, retryAfter: 1, unexpected: true }
  const zod = isZodError(error) ? error : isZodError(cause) ? cause : undefined
  if (zod) return { status: 400, code: 'BAD_REQUEST', message: describeZodError(zod), unexpected: false }
  if (isTRPCError(error)) {
    const status = HTTP_STATUS[error.code] ?? 500
    if (status >= 500 && error.code === 'INTERNAL_SERVER_ERROR') {
      return { status, code: error.code, message: GENERIC_ERROR_MESSAGE, unexpected: true }
    }
    // A rate-limit refusal or a full queue says when to come back.
    const declared = (error as { retryAfter?: unknown }).retryAfter
    const retryAfter = typeof declared === 'number' ? declared : undefined
    return { status, code: error.code, message: error.message, retryAfter, unexpected: false }
  }
  return { status: 500, code: 'INTERNAL_SERVER_ERROR', message: GENERIC_ERROR_MESSAGE, unexpected: true }
}
