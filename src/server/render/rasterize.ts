/** SVG → PNG for the card renderers, run in their worker pool (catalog/maker/pool.ts). */
import { Resvg } from '@resvg/resvg-js'

export interface RasterImage {
  data: Uint8Array
  width: number
  height: number
}

/** Renders an SVG document at its own size. No system fonts: every glyph is already a path. */
export function rasterize(svg: string): RasterImage {
  const image = new Resvg(svg, { fitTo: { mode: 'original' }, font: { loadSystemFonts: false } }).render()
  return { data: image.asPng(), width: image.width, height: image.height }
}

/** A failure the request caused, raised inside a worker; `status` is the HTTP status to answer with. */
export class RenderRefusal extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message)
  }
}
