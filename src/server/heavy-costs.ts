/**
 * What a call of a costly anonymous operation costs in the `heavy` rate-limit class
 * (docs/social.md#rate-limits): the catalog rows of execute, agent, speech, code images, makers,
 * imaging and media name one of these, and the REST adapter counts it per client address before
 * the handler runs (`heavyProcedure` does the same for the one such tRPC procedure, codeimage.create). A unit is about what the smallest call of the cheapest of them costs (a short
 * snippet drawn, a short line spoken); larger input costs more units, read from what the request
 * brings as sent: its query string and its declared body.
 */
import type { IncomingMessage } from 'node:http'

export interface HeavyCost {
  /** Units any call costs. */
  base: number
  /** One more unit per this many bytes of query string and body. */
  bytesPerUnit: number
}

export const HEAVY_COSTS = {
  /** Code to draw (code images, carbon) or captions to set (meme, fakepost, logo): 1, plus 1 per KiB. */
  render: { base: 1, bytesPerUnit: 1024 },
  /** Text to speak: 1, plus 1 per 100 bytes (a 1,890-character English text, URL-encoded, is 27). */
  speech: { base: 1, bytesPerUnit: 100 },
  /** A program run in a sandbox: 5, plus 1 per KiB of code and stdin. */
  program: { base: 5, bytesPerUnit: 1024 },
  /** A coding agent's run, several model calls and programs: 10, plus 1 per KiB. */
  agent: { base: 10, bytesPerUnit: 1024 },
  /** An image effect, expansion or upscale: 2, plus 1 per 256 KiB of uploaded image (a 10 MiB photo is 42). */
  image: { base: 2, bytesPerUnit: 256 * 1024 },
  /** A web page and its oEmbed answer fetched: 2, plus 1 per KiB of request. */
  page: { base: 2, bytesPerUnit: 1024 },
} as const satisfies Record<string, HeavyCost>

/** The units a call with `bytes` of input costs. */
export function unitsFor(cost: HeavyCost, bytes: number): number {
  return cost.base + Math.floor(bytes / cost.bytesPerUnit)
}

/**
 * The units `req` costs. A body without Content-Length (chunked) is of unknown size and is
 * charged as unbounded, which the limiter takes as the whole window's quota: send Content-Length.
 */
export function heavyUnits(cost: HeavyCost, req: IncomingMessage): number {
  const url = req.url ?? ''
  const mark = url.indexOf('?')
  const query = mark < 0 ? 0 : url.length - mark - 1
  const declared = req.headers['content-length']
  const chunked = declared === undefined && /\bchunked\b/i.test(req.headers['transfer-encoding'] ?? '')
  const body = chunked ? Infinity : Number(declared) || 0
  return unitsFor(cost, query + body)
}
