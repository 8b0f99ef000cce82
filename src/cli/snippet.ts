/**
 * What `plaza util codeimage` and `plaza util carbon` share: read the snippet (a file or standard
 * input), guess its language from the file name, name the output, render embedded (the code-image
 * renderer in-process, no data directory) or POST to a server, write the image.
 */
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { MAX_SNIPPET_BYTES } from '../shared/schemas/codeimage.js'
import type { RenderJob } from '../server/codeimage/renderer.js'
import { answerType, reach, UsageError } from './client.js'

export interface RenderedSnippet {
  data: Uint8Array
  format: 'png' | 'svg'
  width: number
  height: number
  language: string
  /** Response headers of a remote render (none when embedded). */
  headers?: Headers
}

/** The snippet of FILE, or of standard input when FILE is `-` or absent. */
export async function readSnippet(file: string | null, command: string): Promise<string> {
  if (file) {
    try {
      return await readFile(file, 'utf8')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw new UsageError(`cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message}`)
    }
  }
  if (process.stdin.isTTY) throw new UsageError(`give a FILE, or pipe the code in (e.g. \`cat main.go | plaza util ${command} -\`)`)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length
    // Read a little past the limit so the renderer's own 413 message explains it.
    if (size > MAX_SNIPPET_BYTES * 2) break
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * A local picture for `--background-image` (embedded rendering): read with the upload limit,
 * sniffed and its header checked as the server checks an upload, so only an image of a size that
 * may be decoded reaches the renderer.
 */
export async function readPicture(file: string): Promise<Uint8Array> {
  const { stat } = await import('node:fs/promises')
  const { IMAGE_MAX_BYTES } = await import('../server/uploads/pipeline.js')
  const { checkImage } = await import('../server/catalog/imaging/source.js')
  let size: number
  try {
    const info = await stat(file)
    if (!info.isFile()) throw new UsageError(`cannot read ${file}: it is not a file`)
    size = info.size
  } catch (error) {
    if (error instanceof UsageError) throw error
    const code = (error as NodeJS.ErrnoException).code
    throw new UsageError(`cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`)
  }
  if (size > IMAGE_MAX_BYTES) throw new UsageError(`${file} is larger than ${IMAGE_MAX_BYTES / (1024 * 1024)} MiB, the limit of a background image`)
  try {
    const { bytes } = await checkImage(await readFile(file), '--background-image')
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/** The language of a file by its extension; undefined leaves it to detection (the server knows shiki's names). */
export async function languageOf(file: string | null): Promise<string | undefined> {
  if (!file) return undefined
  const { languageOfFile } = await import('../server/codeimage/languages.js')
  return languageOfFile(file) ?? undefined
}

/** `main.png` for `src/main.rs`, `snippet.png` for standard input. */
export function defaultOutput(file: string | null, format: 'png' | 'svg'): string {
  if (!file) return `snippet.${format}`
  const base = path.basename(file)
  const dot = base.lastIndexOf('.')
  return `${dot > 0 ? base.slice(0, dot) : base}.${format}`
}

/**
 * Renders in-process: validation and render job by `toJob` (the server's own code), then the
 * code-image service's worker pool, closed afterwards. No database or data directory is needed.
 */
export async function renderEmbedded(toJob: () => Promise<RenderJob>): Promise<RenderedSnippet> {
  const { createCodeImageService } = await import('../server/codeimage/service.js')
  const service = createCodeImageService({ env: process.env })
  try {
    return await service.renderJob(await toJob())
  } finally {
    await service.close()
  }
}

/** POSTs the request to the server's route and reads the image it answers. */
export async function renderRemote(url: string, route: string, body: unknown, accept: string): Promise<RenderedSnippet> {
  const response = await reach(url, `${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify(body) })
  const type = await answerType(url, response)
  if (!type.startsWith('image/')) throw new Error(`unexpected answer from ${url} (${type || 'no content type'}): is it a Plaza server?`)
  return {
    data: new Uint8Array(await response.arrayBuffer()),
    format: type.startsWith('image/svg') ? 'svg' : 'png',
    width: Number(response.headers.get('x-image-width')),
    height: Number(response.headers.get('x-image-height')),
    language: response.headers.get('x-code-language') ?? '',
    headers: response.headers,
  }
}

/** Writes the image to `output` (`-`: standard output). */
export async function writeImage(output: string, data: Uint8Array): Promise<void> {
  if (output === '-') process.stdout.write(data)
  else await writeFile(output, data)
}
