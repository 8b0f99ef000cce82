/**
 * `POST /api/execute` `{language, code, stdin?}`: runs the program and answers
 * `{message, stdout, stderr, exit_code, timed_out, duration_ms, language}`. A program that fails
 * is still a 200 (its exit code says so); errors are the request's: 400, 413, 503 when busy (with
 * Retry-After) or when the language's provider is not configured.
 */
import { executeInput, MAX_CODE_BYTES, MAX_STDIN_BYTES } from '../../../../shared/schemas/execute.js'
import { readJson, sendError, sendJson } from '../../../http.js'
import type { Exchange } from '../../../rest/adapter.js'
import { sendRouteError } from '../../../rest/adapter.js'
import { BusyError } from './gate.js'

/** Room for the largest code and stdin even when JSON escaping doubles them. */
const BODY_LIMIT = 2 * (MAX_CODE_BYTES + MAX_STDIN_BYTES) + 4096

export async function handleExecute(exchange: Exchange): Promise<void> {
  const { req, res, ctx } = exchange
  try {
    const request = executeInput.parse(await readJson(req, BODY_LIMIT))
    const result = await ctx.services.execute.run(request)
    const ending = result.timed_out ? 'timed out' : `exited with ${result.exit_code}`
    sendJson(res, 200, { message: `${result.language} program ${ending} after ${result.duration_ms} ms`, ...result })
  } catch (error) {
    if (error instanceof BusyError) return sendError(res, 503, error.message, { 'retry-after': String(error.retryAfter) }, ctx.services.clock())
    sendRouteError(exchange, error)
  }
}
