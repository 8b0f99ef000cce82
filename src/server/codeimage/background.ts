/**
 * The `backgroundImage` of a code image: a file this server recorded (`uploads/...`), read from
 * storage through the image operations' reader (recorded and unexpired only, sniffed, header
 * checked against decompression bombs), so the worker gets bytes that are safe to decode. No URL
 * is ever fetched: validate.ts takes only `uploads/` paths.
 */
import { readSourceImage } from '../catalog/imaging/source.js'
import type { Services } from '../services.js'
import type { CodeImageJob } from './renderer.js'

export async function attachBackgroundImage(services: Services, job: CodeImageJob, origin: string): Promise<CodeImageJob> {
  if (!job.backgroundImage) return job
  const { bytes } = await readSourceImage(services, job.backgroundImage, 'backgroundImage', origin)
  return { ...job, backgroundImageBytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) }
}
