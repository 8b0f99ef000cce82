import { codeImageInput, type CodeImageInput, type CodeImageStored } from '../../shared/schemas/codeimage.js'
import type { Services } from '../services.js'
import { storeGenerated } from '../uploads/generated.js'
import { uploadUrl } from '../uploads/pipeline.js'
import { attachBackgroundImage } from './background.js'
import { MIME } from './service.js'

/**
 * Renders and records the image as `uploads/codeimages/<hash>.<png|svg>` (recorded files are the
 * ones served), named by the normalised render job: the same request answers the same stored
 * image without rendering again. It expires like every generated file; `origin` makes the absolute `url`.
 */
export async function storeCodeImage(services: Services, input: CodeImageInput, origin: string): Promise<CodeImageStored> {
  // The render job is the validated request with aliases resolved (`ts` and `typescript` are one language).
  const { toRenderJob } = await import('./validate.js')
  const job = toRenderJob(codeImageInput.parse(input))
  const stored = await storeGenerated(services, {
    kind: 'codeimages',
    key: job,
    ext: job.format,
    mime: MIME[job.format],
    render: async () => {
      const image = await services.codeimage.render(input, (job) => attachBackgroundImage(services, job, origin))
      return { body: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength), width: image.width, height: image.height }
    },
  })
  return { message: 'Code image created', url: uploadUrl(origin, stored.path), path: stored.path, width: stored.width ?? 0, height: stored.height ?? 0 }
}
