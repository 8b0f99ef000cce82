/**
 * AI upscaling for `/api/upscale` (docs/imaging.md): when an images target speaks AUTOMATIC1111's
 * protocol, its `extra-single-image` (an ESRGAN-family upscaler) does the work; when none does,
 * or every one fails, the operation upscales in Plaza as before.
 */
import { ProviderError, UpstreamError } from '../../providers/errors.js'
import { upscaleImage } from '../../providers/images.js'
import type { ProviderLayer } from '../../providers/layer.js'
import type { Services } from '../../services.js'
import type { EncodedImage } from '../imaging/pixels.js'
import { checkUpstreamImage, preparePng, reencode } from './result.js'

/** The layer, when it has a target that upscales; null otherwise (an invalid configuration too: local upscaling still works). */
export async function aiUpscaler(services: Services): Promise<ProviderLayer | null> {
  let layer: ProviderLayer
  try {
    layer = await services.providers()
  } catch {
    return null
  }
  return layer.config.services.get('images')?.some((target) => target.protocol === 'automatic1111') ? layer : null
}

/** The image upscaled by the provider, or null when it could not be (then Plaza upscales it itself). */
export async function upscaleWithProvider(services: Services, layer: ProviderLayer, source: Buffer, scale: number): Promise<EncodedImage | null> {
  const env = services.config.env
  // Inputs past 2048 px would come back past the 8192 px Plaza answers.
  const input = await preparePng(env, source, 2048)
  try {
    const { value } = await layer.call('images', async (call) => {
      if (call.target.protocol !== 'automatic1111') throw new UpstreamError('protocol', `${call.label} does not upscale`)
      return checkUpstreamImage(call, await upscaleImage(call, input.png, scale))
    })
    return await reencode(env, value)
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error
    services.logger.warn('AI upscaling failed; upscaling in Plaza', { message: error.message })
    return null
  }
}
