/**
 * `GET /api/meme`: a bundled template (an SVG of Plaza's own, nested whole) or an image of one's
 * own, with the captions in the classic look: heavy condensed capitals, white with a black
 * outline, wrapped to their box and shrunk until they fit.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { bands, MEME_MAX_SIDE, MEME_MIN_SIDE, MEME_TEMPLATES, type CaptionBox } from '../../../../shared/schemas/meme.js'
import { drawLines, fitText, fontSet } from '../../../render/text.js'

/** The templates' SVG files: read from src/ both from the sources and from dist/ (package.json ships the folder). */
export const TEMPLATES_DIR = fileURLToPath(new URL('../../../../../src/server/catalog/maker/meme/templates/', import.meta.url))

export interface MemeJob {
  kind: 'meme'
  /** A template id, or null when `image` (a checked image's bytes) is the picture. */
  template: string | null
  image?: Uint8Array
  top: string
  bottom: string
}

export interface Scene {
  svg: string
  width: number
  height: number
}

const templateCache = new Map<string, string>()

/** A template's drawing without its outer <svg> element, to nest in the meme's own. */
export function templateBody(id: string): string {
  let body = templateCache.get(id)
  if (body === undefined) {
    const text = readFileSync(`${TEMPLATES_DIR}${id}.svg`, 'utf8')
    body = text.replace(/^[\s\S]*?<svg[^>]*>/, '').replace(/<\/svg>\s*$/, '')
    templateCache.set(id, body)
  }
  return body
}

const LINE_HEIGHT = 1.08

/** One caption in its box: capitals, as large as fits (at most 1/8 of the image's width per line). */
export function captionSvg(text: string, box: CaptionBox, imageWidth: number): string {
  const caption = text.trim().toLocaleUpperCase('en')
  if (!caption) return ''
  const set = fontSet('impact')
  const maxSize = Math.max(12, Math.min(box.height / LINE_HEIGHT, imageWidth / 8))
  const fitted = fitText(set, caption, { width: box.width, height: box.height, maxSize: Math.round(maxSize), minSize: Math.max(8, Math.round(imageWidth / 60)), lineHeight: LINE_HEIGHT })
  const blockHeight = fitted.lines.length * fitted.size * LINE_HEIGHT
  const align = box.align ?? 'middle'
  const y = align === 'top' ? box.y : align === 'bottom' ? box.y + box.height - blockHeight : box.y + (box.height - blockHeight) / 2
  // The stroke is drawn under the fill (paint-order), so half of it shows: an outline of size/12.
  const stroke = Math.max(2, Math.round((fitted.size / 6) * 10) / 10)
  return drawLines(set, fitted.lines, {
    x: box.x + box.width / 2,
    y,
    size: fitted.size,
    lineHeight: LINE_HEIGHT,
    align: 'middle',
    attributes: `fill="#ffffff" stroke="#000000" stroke-width="${stroke}" stroke-linejoin="round" paint-order="stroke"`,
  })
}

/** The meme's SVG document. */
export async function memeScene(job: MemeJob): Promise<Scene> {
  let width: number
  let height: number
  let picture: string
  let boxes: [CaptionBox, CaptionBox]
  if (job.template) {
    const template = MEME_TEMPLATES.find((t) => t.id === job.template)
    if (!template) throw new Error(`no template ${job.template}`)
    ;({ width, height, boxes } = template)
    picture = `<svg x="0" y="0" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${templateBody(template.id)}</svg>`
  } else {
    const meta = await sharp(job.image!).metadata()
    const side = Math.max(meta.width ?? 1, meta.height ?? 1)
    const scale = Math.min(MEME_MAX_SIDE / side, Math.max(1, MEME_MIN_SIDE / side))
    width = Math.max(1, Math.round((meta.width ?? 1) * scale))
    height = Math.max(1, Math.round((meta.height ?? 1) * scale))
    // Orientation applied and the picture scaled here, so resvg only places it.
    const png = await sharp(job.image!).rotate().resize(width, height, { fit: 'fill' }).png({ compressionLevel: 1 }).toBuffer()
    picture = `<image x="0" y="0" width="${width}" height="${height}" preserveAspectRatio="none" href="data:image/png;base64,${png.toString('base64')}"/>`
    boxes = bands(width, height)
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${picture}${captionSvg(job.top, boxes[0], width)}${captionSvg(job.bottom, boxes[1], width)}</svg>`
  return { svg, width, height }
}
