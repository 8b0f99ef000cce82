/** Failures of the chat gateway and of its upstream calls, and how clients see them. */
import type { ErrorCases } from '../errors.js'

export { ClientAbortError, UpstreamError, type UpstreamFailureKind } from '../providers/errors.js'

export type GatewayErrorCode =
  | 'provider_not_configured'
  | 'upstream_error'
  | 'upstream_timeout'
  | 'invalid_request'
  | 'model_not_found'
  | 'invalid_api_key'
  | 'model_not_allowed'
  | 'rate_limit_exceeded'
  | 'insufficient_quota'
  | 'conversation_not_found'
  | 'conversation_busy'
  | 'premium_required'
  | 'response_not_found'
  | 'unsupported_for_model'

/** What the gateway reports to its caller: an HTTP status, an OpenAI-style type and code, and a message safe to show. */
export class GatewayError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 429 | 502 | 503 | 504,
    readonly code: GatewayErrorCode,
    message: string,
    /** The request field at fault, for OpenAI's `error.param`. */
    readonly param: string | null = null,
    /** Seconds, for the Retry-After header of a 429. */
    readonly retryAfter?: number,
    /** Headers the answer carries (a key's x-ratelimit-* on a 429). */
    readonly headers?: Record<string, string>,
  ) {
    super(message)
  }

  /** OpenAI's `error.type` for this failure (its clients raise AuthenticationError, PermissionDeniedError, RateLimitError from the status). */
  get type(): string {
    if (this.code === 'insufficient_quota') return 'insufficient_quota'
    if (this.status === 429) return 'rate_limit_error'
    if (this.status < 500) return 'invalid_request_error'
    if (this.status === 503) return 'service_unavailable'
    return 'upstream_error'
  }
}

/** What the gateway's gate answers (keys.access): every operation behind it (ErrorCases in errors.ts). */
export const GATEWAY_KEY_ERRORS: ErrorCases = {
  401: 'Once the operator has created gateway keys: no key, or an unknown or revoked one',
  403: 'The key may not use the model asked for',
  429: "The key's requests per minute or its token budget are used up; `Retry-After` says when to try again",
}

/** What a call to a model through the gateway can answer (chat/gateway.ts), beyond the gate's answers. */
export const GATEWAY_CALL_ERRORS: ErrorCases = {
  404: 'The model is not served here (GET /api/v1/models lists the names that are)',
  502: 'Every upstream serving the model failed, or answered something unusable',
  503: 'No chat provider is configured on this server (the message says what to set)',
  504: 'The upstream did not answer in time',
}

/** A conversation kept on the server (chat/conversations.ts). */
export const CONVERSATION_ERRORS: ErrorCases = {
  404: 'The conversation is unknown, expired (24 hours without a message) or was stored elsewhere',
  409: 'Another message of this conversation is being answered',
}

export { redact } from '../providers/errors.js'
