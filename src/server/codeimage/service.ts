/**
 * The code-image service on `Services`: validates and renders in the worker pool. The pool
 * starts its workers on the first render, or at `warm()` (the server's start-up), so processes
 * that never render (most CLI commands) load no fonts.
 */
import { availableParallelism } from 'node:os'
import { codeImageInput, type CodeImageInput } from '../../shared/schemas/codeimage.js'
import { parsePositiveInt, type ServerConfig } from '../config.js'
import { RenderPool } from './pool.js'
import type { RenderResult } from './renderer.js'

export interface CodeImageService {
  /** Renders a request (raw input, validated here); 400/413 for bad input, 503 past the time budget. */
  render(input: CodeImageInput): Promise<RenderResult>
  /** Starts the render workers and warms them (fonts, highlighter, glyphs); call it at server start-up. */
  warm(): Promise<void>
  close(): Promise<void>
}

export const MIME = { png: 'image/png', svg: 'image/svg+xml' } as const


export function createCodeImageService(config: Pick<ServerConfig, 'env'>): CodeImageService {
  const size = parsePositiveInt('PLAZA_CODEIMAGE_WORKERS', config.env.PLAZA_CODEIMAGE_WORKERS, Math.max(1, Math.min(4, availableParallelism() - 1)))
  const pool = new RenderPool({
    size,
    timeoutMs: parsePositiveInt('PLAZA_CODEIMAGE_TIMEOUT_MS', config.env.PLAZA_CODEIMAGE_TIMEOUT_MS, 15_000),
    queueLimit: size * 16,
  })
  return {
    async render(input) {
      // Validation needs the language tables (shiki, highlight.js): loaded on the first render, not at start-up.
      const { toRenderJob } = await import('./validate.js')
      return pool.render(toRenderJob(codeImageInput.parse(input)))
    },
    warm: () => pool.warm(),
    close: () => pool.close(),
  }
}
