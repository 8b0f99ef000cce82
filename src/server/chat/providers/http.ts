/**
 * The chat providers' HTTP: a JSON POST through the provider layer's shared request
 * (providers/http.ts: timeouts, client aborts, failures sorted, bodies bounded).
 */
import type { Dispatcher } from 'undici'
import { requestUpstream, type UpstreamResponse } from '../../providers/http.js'

export type { UpstreamResponse }

export interface PostOptions {
  url: string
  headers: Record<string, string>
  body: unknown
  timeoutMs: number
  signal: AbortSignal
  dispatcher: Dispatcher
  /** Names the upstream in messages, e.g. `provider "openai" (gpt-4o-mini)`. */
  label: string
}

export function postUpstream(options: PostOptions): Promise<UpstreamResponse> {
  return requestUpstream({ ...options, method: 'POST', body: { json: options.body } })
}
