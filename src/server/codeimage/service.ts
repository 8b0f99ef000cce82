/**
 * The code-image service on `Services`: validates, renders in the worker pool, and stores
 * images as `uploads/codeimages/<random>.png` (the data directory's storage) for JSON answers. The pool starts its workers on
 * the first render, so processes that never render (most CLI commands) load no fonts.
 */
import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { codeImageInput, type CodeImageInput, type CodeImageStored } from '../../shared/schemas/codeimage.js'
import { ConfigError, type ServerConfig } from '../config.js'
import type { Storage } from '../uploads/storage.js'
import { RenderPool } from './pool.js'
import type { RenderResult } from './renderer.js'
import { toRenderJob } from './validate.js'

export interface CodeImageService {
  /** Renders a request (raw input, validated here); 400/413 for bad input, 503 past the time budget. */
  render(input: CodeImageInput): Promise<RenderResult>
  /** Renders and stores the image; `origin` makes the absolute `url`. */
  renderAndStore(input: CodeImageInput, origin: string): Promise<CodeImageStored>
  close(): Promise<void>
}

export const MIME = { png: 'image/png', svg: 'image/svg+xml' } as const

function readPositive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`${name} must be a whole number of at least 1, not "${raw}"`)
  return value
}

export function createCodeImageService(config: Pick<ServerConfig, 'env'>, storage: Storage): CodeImageService {
  const size = readPositive(config.env, 'PLAZA_CODEIMAGE_WORKERS', Math.max(1, Math.min(4, availableParallelism() - 1)))
  const pool = new RenderPool({
    size,
    timeoutMs: readPositive(config.env, 'PLAZA_CODEIMAGE_TIMEOUT_MS', 15_000),
    queueLimit: size * 16,
  })
  const render = (input: CodeImageInput) => pool.render(toRenderJob(codeImageInput.parse(input)))
  return {
    render,
    async renderAndStore(input, origin) {
      const image = await render(input)
      const relative = `uploads/codeimages/${randomBytes(16).toString('base64url')}.${image.format}`
      await storage.put(relative, Buffer.from(image.data))
      return { message: 'Code image created', url: `${origin}/${relative}`, path: relative, width: image.width, height: image.height }
    },
    close: () => pool.close(),
  }
}
