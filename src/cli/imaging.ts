/**
 * What `plaza util fx`, `expand` and `upscale` share: read the image (a local file, a URL, or an
 * `uploads/...` path), run the operation embedded or ask a server, write the result.
 */
import { readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { PlazaClient, Target } from './client.js'
import { answerType, reach, remoteFetch, remoteFormData, UsageError } from './client.js'

export type ImageOperation =
  | { kind: 'imagefx'; effect: string }
  | { kind: 'expand'; ratio: string }
  | { kind: 'upscale'; scale: string }

export interface ImageCommandOutput {
  output: string
  format: 'png' | 'jpeg'
  width: number
  height: number
}

interface Result {
  data: Buffer
  format: 'png' | 'jpeg'
  width: number
  height: number
}

const isUrl = (input: string) => /^https?:\/\//i.test(input)
const isUploadPath = (input: string) => /^\/?uploads\//.test(input)

/** The query string of the operation's GET path, as the server reads it. */
function queryOf(operation: ImageOperation, image: string): { path: string; query: Record<string, string> } {
  switch (operation.kind) {
    case 'imagefx':
      return { path: '/api/imageFx', query: { imageUrl: image, [/^\d+$/.test(operation.effect) ? 'effectIndex' : 'effect']: operation.effect } }
    case 'expand':
      return { path: '/api/diffuser/expand', query: { url: image, ratio: operation.ratio } }
    case 'upscale':
      return { path: '/api/upscale', query: { url: image, scale: operation.scale } }
  }
}

/** `photo-sepia.jpg`, `photo-16x9.png`, `photo-2x.png`: next to nothing, in the current directory. */
export function defaultOutput(input: string, operation: ImageOperation, format: 'png' | 'jpeg'): string {
  const name = isUrl(input) ? decodeURIComponent(new URL(input).pathname.split('/').pop() ?? '') : path.basename(input)
  const dot = name.lastIndexOf('.')
  const base = (dot > 0 ? name.slice(0, dot) : name).replace(/[^\w.-]+/g, '_') || 'image'
  const suffix = operation.kind === 'imagefx' ? operation.effect : operation.kind === 'expand' ? operation.ratio.replace(/[:/]/g, 'x') : `${operation.scale}x`
  return `${base}-${suffix}.${format === 'jpeg' ? 'jpg' : 'png'}`
}

/** A URL or uploads/ path is fetched by the server (GET); a local file is sent as the POST form's `file`. */
async function runRemote(url: string, operation: ImageOperation, input: string): Promise<Result> {
  const byReference = isUrl(input) || isUploadPath(input)
  const { path: route, query } = queryOf(operation, input)
  const init: Parameters<typeof remoteFetch>[1] = { headers: { accept: 'image/png, image/jpeg' } }
  if (!byReference) {
    delete query[operation.kind === 'imagefx' ? 'imageUrl' : 'url']
    const form = await remoteFormData()
    form.append('file', new Blob([new Uint8Array(await readLocal(input))]), path.basename(input))
    Object.assign(init, { method: 'POST', body: form })
  }
  const response = await reach(url, `${url}${route}?${new URLSearchParams(query)}`, init)
  const type = await answerType(url, response)
  if (type !== 'image/png' && type !== 'image/jpeg') throw new Error(`unexpected answer from ${url} (${type || 'no content type'}): is it a Plaza server?`)
  return {
    data: Buffer.from(await response.arrayBuffer()),
    format: type === 'image/jpeg' ? 'jpeg' : 'png',
    width: Number(response.headers.get('x-image-width')),
    height: Number(response.headers.get('x-image-height')),
  }
}

/**
 * Sends a local image to the server at `url` (`POST /api/files`) and answers the `uploads/...` path
 * it is kept under: what an operation that takes a path or URL reads instead of the file.
 */
export async function storeLocalImage(url: string, file: string): Promise<string> {
  const form = await remoteFormData()
  form.append('file', new Blob([new Uint8Array(await readLocal(file))]), path.basename(file))
  const response = await reach(url, `${url}/api/files`, { method: 'POST', body: form, headers: { accept: 'application/json' } })
  const type = await answerType(url, response, true)
  const stored = type.includes('json') ? ((await response.json()) as { path?: unknown }) : null
  if (typeof stored?.path !== 'string') throw new Error(`unexpected answer from ${url} to POST /api/files: is it a Plaza server?`)
  return stored.path
}

/** Reads a local image file as the server reads a fetched one: at most 10 MiB. */
export async function readLocal(file: string): Promise<Buffer> {
  const { IMAGE_MAX_BYTES } = await import('../server/uploads/pipeline.js')
  try {
    const info = await stat(file)
    if (info.isDirectory()) throw new UsageError(`cannot read ${file}: it is a directory`)
    if (info.size > IMAGE_MAX_BYTES) throw new Error(`${file} is larger than ${IMAGE_MAX_BYTES / (1024 * 1024)} MiB`)
    return await readFile(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`cannot read ${file}: no such file`)
    throw error
  }
}

/** The operation in this process, with the server's own validation, fetch guard and image checks. */
async function runEmbedded(operation: ImageOperation, input: string, client: () => Promise<PlazaClient>): Promise<Result> {
  const [{ expandInput, imageFxInput, upscaleInput }, { describeZodError }, { ZodError }, source, pixels, { applyEffect }, canvas, config] = await Promise.all([
    import('../shared/schemas/imaging.js'),
    import('../server/errors.js'),
    import('zod'),
    import('../server/catalog/imaging/source.js'),
    import('../server/catalog/imaging/pixels.js'),
    import('../server/catalog/imaging/effects.js'),
    import('../server/catalog/imaging/canvas.js'),
    import('../server/config.js'),
  ])
  const { query } = queryOf(operation, isUrl(input) || isUploadPath(input) ? input : 'file')
  let transform: (image: import('../server/catalog/imaging/pixels.js').RawImage) => Promise<import('../server/catalog/imaging/pixels.js').RawImage>
  try {
    if (operation.kind === 'imagefx') {
      const { effect } = imageFxInput.parse(query)
      transform = (image) => applyEffect(image, effect)
    } else if (operation.kind === 'expand') {
      const { ratio } = expandInput.parse(query)
      transform = (image) => canvas.expand(image, ratio)
    } else {
      const { scale } = upscaleInput.parse(query)
      transform = (image) => canvas.upscale(image, scale)
    }
  } catch (error) {
    throw error instanceof ZodError ? new UsageError(describeZodError(error)) : error
  }
  let image
  if (isUploadPath(input)) {
    const { services } = await client()
    image = await source.readSourceImage(services!, input, 'image', 'http://localhost')
  } else if (isUrl(input)) {
    const { guardedFetch } = await import('../server/fetch-guard.js')
    const allowPrivate = config.parseFetchAllowPrivate(process.env.PLAZA_FETCH_ALLOW_PRIVATE)
    image = await source.checkImage((await guardedFetch(input, { allowPrivate })).bytes, 'url')
  } else {
    image = await source.checkImage(await readLocal(input), input)
  }
  const encoded = await pixels.encode(await transform(await pixels.decode(image.bytes)), image.format)
  return { data: encoded.data, format: encoded.mime === 'image/jpeg' ? 'jpeg' : 'png', width: encoded.width, height: encoded.height }
}

/** Runs `operation` on `input` where the target says, writes the result (`-` for stdout) and describes it. */
export async function runImageCommand(
  target: Target,
  client: () => Promise<PlazaClient>,
  operation: ImageOperation,
  input: string,
  output: string | undefined,
): Promise<ImageCommandOutput> {
  const result = target.kind === 'remote' ? await runRemote(target.url, operation, input) : await runEmbedded(operation, input, client)
  const file = output ?? defaultOutput(input, operation, result.format)
  if (file === '-') process.stdout.write(result.data)
  else await writeFile(file, result.data)
  return { output: file, format: result.format, width: result.width, height: result.height }
}
