/**
 * `GET /api/meme` and `GET /api/meme/templates` (docs/maker.md): the bundled templates (Plaza's own
 * drawings, MIT) with the boxes their captions go in, and the query schema.
 */
import { z } from 'zod'

/** A caption's box, in the template's pixels. */
export interface CaptionBox {
  x: number
  y: number
  width: number
  height: number
  /** Where the lines sit in the box (default: the middle). */
  align?: 'top' | 'middle' | 'bottom'
}

export interface MemeTemplate {
  id: string
  name: string
  width: number
  height: number
  /** Where `top` and `bottom` go, in that order. */
  boxes: [CaptionBox, CaptionBox]
  example: { top: string; bottom: string }
}

/** The classic places: a band along the top and one along the bottom. */
export const bands = (width: number, height: number): [CaptionBox, CaptionBox] => {
  const margin = Math.round(width * 0.04)
  const band = Math.round(height * 0.22)
  return [
    { x: margin, y: Math.round(height * 0.03), width: width - 2 * margin, height: band, align: 'top' },
    { x: margin, y: height - Math.round(height * 0.03) - band, width: width - 2 * margin, height: band, align: 'bottom' },
  ]
}

/** The bundled templates, in the order `GET /api/meme/templates` lists them. */
export const MEME_TEMPLATES: MemeTemplate[] = [
  { id: 'this-is-fine', name: 'This is fine (room on fire)', width: 600, height: 450, boxes: bands(600, 450), example: { top: 'Production is down', bottom: 'This is fine' } },
  {
    id: 'two-buttons',
    name: 'Two buttons',
    width: 600,
    height: 600,
    boxes: [
      { x: 40, y: 60, width: 240, height: 110 },
      { x: 320, y: 60, width: 240, height: 110 },
    ],
    example: { top: 'Write tests', bottom: 'Ship on Friday' },
  },
  {
    id: 'nope-yes',
    name: 'Nope / yes (two panels)',
    width: 600,
    height: 600,
    boxes: [
      { x: 315, y: 20, width: 270, height: 260 },
      { x: 315, y: 320, width: 270, height: 260 },
    ],
    example: { top: 'Reading the docs', bottom: 'Guessing until it works' },
  },
  {
    id: 'expanding-brain',
    name: 'Expanding brain (small, then glowing)',
    width: 600,
    height: 600,
    boxes: [
      { x: 15, y: 20, width: 270, height: 260 },
      { x: 15, y: 320, width: 270, height: 260 },
    ],
    example: { top: 'Tabs', bottom: 'Spaces rendered as tabs' },
  },
  {
    id: 'change-my-mind',
    name: 'Change my mind (table with a sign)',
    width: 600,
    height: 450,
    boxes: [
      { x: 24, y: 14, width: 552, height: 90 },
      { x: 250, y: 262, width: 250, height: 92 },
    ],
    example: { top: '', bottom: 'Tabs are better. Change my mind' },
  },
  {
    id: 'distracted',
    name: 'Distracted walker (three figures)',
    width: 600,
    height: 400,
    boxes: [
      { x: 20, y: 14, width: 220, height: 100 },
      { x: 380, y: 14, width: 200, height: 100 },
    ],
    example: { top: 'A new framework', bottom: 'The project I started' },
  },
  { id: 'victory', name: 'Victory fist on the beach', width: 600, height: 500, boxes: bands(600, 500), example: { top: 'Fixed the bug', bottom: 'Without adding a new one' } },
  { id: 'surprised', name: 'Surprised face', width: 500, height: 500, boxes: bands(500, 500), example: { top: 'The build passed', bottom: 'On the first try' } },
  { id: 'mountain-sage', name: 'The mountain sage', width: 600, height: 450, boxes: bands(600, 450), example: { top: 'One does not simply', bottom: 'Exit vim' } },
]

export const MEME_TEMPLATE_IDS = MEME_TEMPLATES.map((t) => t.id)

/** Longest caption, in characters. */
export const MEME_CAPTION_MAX = 200
/** The longest side of a meme made from an image of one's own (smaller images are scaled up to at least MEME_MIN_SIDE). */
export const MEME_MAX_SIDE = 1200
export const MEME_MIN_SIDE = 320

const caption = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .max(MEME_CAPTION_MAX, `${field} is longer than ${MEME_CAPTION_MAX} characters`)
    .default('')
    .describe(`caption, at most ${MEME_CAPTION_MAX} characters; drawn in capitals, wrapped and shrunk to fit`)

/** `GET /api/meme?template=&top=&bottom=` or `?url=&top=&bottom=`. */
export const memeInput = z
  .object({
    template: z
      .string({ error: 'template must be a string' })
      .transform((id) => id.trim().toLowerCase())
      .refine((id) => MEME_TEMPLATE_IDS.includes(id), `template must be one of: ${MEME_TEMPLATE_IDS.join(', ')}`)
      .optional()
      .describe(`a bundled template: ${MEME_TEMPLATE_IDS.join(', ')}`),
    url: z
      .string({ error: 'url must be a string' })
      .trim()
      .min(1, 'url is empty')
      .max(2048, 'url is longer than 2048 characters')
      .optional()
      .describe('instead of a template, an image: an http(s) URL or an uploads/... path of this server'),
    top: caption('top'),
    bottom: caption('bottom'),
  })
  .superRefine((input, context) => {
    if (!input.template && !input.url) context.addIssue({ code: 'custom', path: ['template'], message: `template (one of: ${MEME_TEMPLATE_IDS.join(', ')}) or url is required` })
    if (input.template && input.url) context.addIssue({ code: 'custom', path: ['url'], message: 'give template or url, not both' })
    if (!input.top.trim() && !input.bottom.trim()) context.addIssue({ code: 'custom', path: ['top'], message: 'top or bottom is required' })
  })
export type MemeInput = z.output<typeof memeInput>

/** `GET /api/meme/templates`. */
export const memeTemplatesAnswer = z.object({
  message: z.string(),
  templates: z.array(z.object({ id: z.string(), name: z.string(), width: z.number(), height: z.number(), lines: z.number(), example: z.object({ top: z.string(), bottom: z.string() }) })),
})
