import { codeImageInput } from '../../shared/schemas/codeimage.js'
import { storeCodeImage } from '../codeimage/store.js'
import { publicProcedure, router } from '../trpc.js'

export const codeimageRouter = router({
  /** Renders a snippet and stores the image; answers `{message, url, path, width, height}` (the REST JSON answer). */
  create: publicProcedure.input(codeImageInput).mutation(({ ctx, input }) => storeCodeImage(ctx.services, input, ctx.origin)),
})
