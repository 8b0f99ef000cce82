/**
 * `POST /api/files`: keeps an image for the operations that take an `uploads/...` path or a URL
 * (a code image's `backgroundImage`, a meme's picture, a fake post's avatar), so that a client
 * holding a local file can use them against a server: `plaza util codeimage --background-image
 * FILE --url ...` sends FILE here first. The multipart `file` is sniffed, checked and re-encoded
 * as an upload is (metadata stripped, longest side 2048 px), then stored as a generated file:
 * named by its content (the same image twice is one file), expiring `PLAZA_GENERATED_TTL` after it
 * was last sent and counted in `PLAZA_GENERATED_MAX_BYTES`. Anyone may call it, as anyone may
 * generate a code image; it counts in the `heavy` rate-limit class as the imaging forms do (its row's cost).
 */
import { createHash } from 'node:crypto'
import type { StoredImageAnswer } from '../../../shared/schemas/imaging.js'
import { sendJson } from '../../http.js'
import { processImage } from '../../media/images.js'
import { mediaQueue } from '../../media/queue.js'
import type { Exchange } from '../../rest/adapter.js'
import { discardBody, readFormFile } from '../../rest/uploads.js'
import { storeGenerated } from '../../uploads/generated.js'
import { IMAGE_MAX_BYTES, IMAGE_MAX_SIDE, uploadUrl } from '../../uploads/pipeline.js'
import { checkImage, type SourceImage } from '../imaging/source.js'

const EXT = { jpeg: 'jpg', png: 'png', webp: 'webp', gif: 'gif' } as const
const MIME = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', gif: 'image/gif' } as const

export async function handleStoreFile({ req, res, ctx }: Exchange): Promise<void> {
  let source: SourceImage
  try {
    source = await checkImage(await readFormFile(req, IMAGE_MAX_BYTES), 'file')
  } catch (error) {
    discardBody(req)
    throw error
  }
  const { services } = ctx
  const stored = await storeGenerated(services, {
    kind: 'files',
    key: { file: createHash('sha256').update(source.bytes).digest('base64url') },
    // processImage keeps the format (a still GIF stays a GIF unless cropped square, which this is not).
    ext: EXT[source.format],
    mime: MIME[source.format],
    render: async () => {
      const image = await mediaQueue(services.config.env).run(() => processImage(source.bytes, source.format, { maxSide: IMAGE_MAX_SIDE }))
      return { body: image.data, width: image.width, height: image.height }
    },
  })
  const answer: StoredImageAnswer = { message: 'File stored', url: uploadUrl(ctx.origin, stored.path), path: stored.path, width: stored.width ?? 0, height: stored.height ?? 0 }
  sendJson(res, 200, answer)
}
