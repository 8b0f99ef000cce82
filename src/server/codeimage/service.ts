/**
 * The code-image service on `Services`: validates and renders in the worker pool. The pool
 * starts its workers on the first render, or at `warm()` (the server's start-up), so processes
 * that never render (most CLI commands) load no fonts.
 */
import { availableParallelism } from 'node:os'
import type { CodeImageInput } from '../../shared/schemas/codeimage.js'
import { parsePositiveInt, type ServerConfig } from '../config.js'
import { toPublicError } from '../errors.js'
import type { RenderOutcome } from '../metrics/recorder.js'
import type { JobTiming } from '../workers/pool.js'
import { perProcess } from '../workers/priority.js'
import { createRenderPool } from './pool.js'
import { WARM_UP_JOB } from './warm-up.js'
import type { CodeImageJob, RenderJob, RenderResult } from './renderer.js'

export interface CodeImageService {
  /**
   * Renders a request (raw input, validated here); 400/413 for bad input, 503 past the time budget.
   * `prepare` completes the validated job before it goes to a worker (the background picture's bytes: background.ts).
   */
  render(input: CodeImageInput, prepare?: (job: CodeImageJob) => Promise<CodeImageJob>): Promise<TimedRender>
  /** Renders an already validated job (a carbon image: carbon/options.ts) in the same pool. */
  renderJob(job: RenderJob): Promise<TimedRender>
  /** Starts the render workers and warms them (fonts, highlighter, glyphs); call it at server start-up. */
  warm(): Promise<void>
  /** Stops: no new render; queued and running ones have `graceMs` to finish. */
  close(graceMs?: number): Promise<void>
}

/** A render, with how long it waited for a worker and ran. */
export type TimedRender = RenderResult & { timing: JobTiming }

export const MIME = { png: 'image/png', svg: 'image/svg+xml' } as const


/** A failed render's outcome: the client's input refused, the renderer busy or too slow, or a failure of ours. */
function outcomeOf(error: unknown): RenderOutcome {
  const { status } = toPublicError(error)
  return status === 400 || status === 413 ? 'rejected' : status === 503 ? 'unavailable' : 'failed'
}

export function createCodeImageService(
  config: Pick<ServerConfig, 'env'>,
  options: { onRender?: (outcome: RenderOutcome, seconds: number) => void; processes?: number } = {},
): CodeImageService {
  const size = parsePositiveInt('PLAZA_CODEIMAGE_WORKERS', config.env.PLAZA_CODEIMAGE_WORKERS, perProcess(Math.max(1, Math.min(4, availableParallelism() - 1)), options.processes))
  const pool = createRenderPool({
    size,
    timeoutMs: parsePositiveInt('PLAZA_CODEIMAGE_TIMEOUT_MS', config.env.PLAZA_CODEIMAGE_TIMEOUT_MS, 15_000),
    queueLimit: size * 16,
  })
  const timed = async (job: () => Promise<RenderJob>): Promise<TimedRender> => {
    const started = performance.now()
    try {
      const { result: image, timing } = await pool.runTimed(await job())
      options.onRender?.('ok', (performance.now() - started) / 1000)
      return { ...image, timing }
    } catch (error) {
      options.onRender?.(outcomeOf(error), (performance.now() - started) / 1000)
      throw error
    }
  }
  return {
    render: (input, prepare) =>
      timed(async () => {
        // Validation needs the language tables (shiki, highlight.js) and the zod schema: loaded on the first render, not at start-up.
        const [{ toRenderJob }, { codeImageInput }] = await Promise.all([import('./validate.js'), import('../../shared/schemas/codeimage.js')])
        const job = toRenderJob(codeImageInput.parse(input))
        return prepare ? prepare(job) : job
      }),
    renderJob: (job) => timed(async () => job),
    warm: () => pool.warm(WARM_UP_JOB),
    close: (graceMs) => pool.close(graceMs),
  }
}
