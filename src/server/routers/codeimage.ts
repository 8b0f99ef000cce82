import { codeImageInput } from '../../shared/schemas/codeimage.js'
import { storeCodeImage } from '../codeimage/store.js'
import { HEAVY_COSTS } from '../heavy-costs.js'
import { heavyProcedure, router } from '../trpc.js'

export const codeimageRouter = router({
  /** Renders a snippet and stores the image; answers `{message, url, path, width, height}` (the REST JSON answer). Counted as POST /api/codeimage is. */
  create: heavyProcedure(HEAVY_COSTS.render).input(codeImageInput).mutation(({ ctx, input }) => storeCodeImage(ctx.services, input, ctx.origin)),
})
