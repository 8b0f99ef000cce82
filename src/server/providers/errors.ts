/**
 * Failures of upstream calls (chat providers and every other provider), and how a caller sees
 * them: `UpstreamError` is one failed call to one upstream; `ProviderError` is what a catalog
 * operation answers once retries and fallbacks are spent (502, 503 or 504 in the envelope).
 */
import { TRPCError } from '@trpc/server'
import type { ErrorCases } from '../errors.js'

export type UpstreamFailureKind = 'http' | 'timeout' | 'network' | 'protocol'

/** One failed call to one provider. `retryable` failures (429, 5xx, dropped connections) are retried before fallback. */
export class UpstreamError extends Error {
  readonly kind: UpstreamFailureKind
  readonly status?: number
  /** From the upstream's Retry-After header, in milliseconds. */
  readonly retryAfterMs?: number

  constructor(kind: UpstreamFailureKind, message: string, options: { status?: number; retryAfterMs?: number } = {}) {
    super(message)
    this.kind = kind
    this.status = options.status
    this.retryAfterMs = options.retryAfterMs
  }

  get retryable(): boolean {
    if (this.kind === 'network') return true
    if (this.kind !== 'http' || this.status === undefined) return false
    return this.status === 429 || this.status === 408 || this.status >= 500
  }
}

/** Thrown when the caller went away; never reported to anyone. */
export class ClientAbortError extends Error {
  constructor() {
    super('the client closed the request')
  }
}

/** Removes every configured key from text that leaves Plaza (upstream messages may echo a key). */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[redacted]')
  return out
}

const CODES = { 502: 'BAD_GATEWAY', 503: 'SERVICE_UNAVAILABLE', 504: 'GATEWAY_TIMEOUT' } as const

/** What a provider-backed operation can answer once retries and fallbacks are spent (ProviderError; ErrorCases in errors.ts). */
export const PROVIDER_ERRORS: ErrorCases = {
  502: 'Every configured provider failed, or answered something unusable',
  503: 'No provider is configured for this operation on this server (the message says what to set)',
  504: 'The provider did not answer in time',
}

/**
 * A provider-backed operation that could not be served: 503 when nothing is configured (the message
 * says what to set), 502 when every upstream failed or answered something unusable, 504 when the last
 * one timed out. A TRPCError, so the envelope answers it with its status and message.
 */
export class ProviderError extends TRPCError {
  constructor(
    readonly status: 502 | 503 | 504,
    message: string,
    /** OpenAI-style error code, for the OpenAI-compatible routes. */
    readonly reason: 'provider_not_configured' | 'upstream_error' | 'upstream_timeout' = status === 503 ? 'provider_not_configured' : status === 504 ? 'upstream_timeout' : 'upstream_error',
  ) {
    super({ code: CODES[status], message })
  }
}
