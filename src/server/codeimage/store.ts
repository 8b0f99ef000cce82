import type { CodeImageInput, CodeImageStored } from '../../shared/schemas/codeimage.js'
import type { Services } from '../services.js'
import { storeFile } from '../uploads/pipeline.js'
import { MIME } from './service.js'

/** Renders and records the image as `uploads/codeimages/<random>.<png|svg>` (recorded files are the ones served); `origin` makes the absolute `url`. */
export async function storeCodeImage(services: Services, input: CodeImageInput, origin: string): Promise<CodeImageStored> {
  const image = await services.codeimage.render(input)
  const stored = await storeFile(services, {
    kind: 'codeimages',
    userId: null,
    body: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength),
    ext: image.format,
    mime: MIME[image.format],
    width: image.width,
    height: image.height,
    origin,
  })
  return { message: 'Code image created', url: stored.url, path: stored.path, width: image.width, height: image.height }
}
