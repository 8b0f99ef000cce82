/**
 * `GET /api/fakepost`: a social-post card (avatar, name, verified mark, @username, the text with
 * colour emoji and CJK, time, counts), drawn at 2x for a sharp 1200 px wide image. A small
 * "generated" mark is always drawn: the card must never pass for a screenshot of a real post.
 */
import { createHash } from 'node:crypto'
import sharp from 'sharp'
import type { FakepostInput } from '../../../../shared/schemas/fakepost.js'
import { drawLines, escapeXml, fontSet, layoutLine, measure, wrap } from '../../../render/text.js'
import type { Scene } from '../meme/render.js'

export interface FakepostJob {
  kind: 'fakepost'
  input: Omit<FakepostInput, 'avatar' | 'time'> & { time: string }
  /** The avatar's checked image bytes; initials on a colour when absent. */
  avatar?: Uint8Array
}

export const FAKEPOST_WIDTH = 1200
/** The mark's words: part of the image whatever the request says. */
export const GENERATED_MARK = 'GENERATED IMAGE · NOT A REAL POST'

const THEMES = {
  light: { background: '#ffffff', text: '#0f1419', muted: '#536471', border: '#eff3f4', mark: '#eef1f4', markText: '#59636e' },
  dark: { background: '#000000', text: '#e7e9ea', muted: '#71767b', border: '#2f3336', mark: '#202327', markText: '#9aa0a6' },
} as const

const AVATAR_COLOURS = ['#1d9bf0', '#7856ff', '#f91880', '#00ba7c', '#ff7a00', '#ffd400', '#e0245e', '#17bf63']

/** 999, 1.2K, 35K, 3.4M, 1.2B, as social apps abbreviate. */
export function compactCount(n: number): string {
  if (n < 1000) return String(n)
  const [value, unit] = n < 1e6 ? [n / 1e3, 'K'] : n < 1e9 ? [n / 1e6, 'M'] : [n / 1e9, 'B']
  const shown = value < 10 ? Math.floor(value * 10) / 10 : Math.floor(value)
  return `${String(shown).replace(/\.0$/, '')}${unit}`
}

/** Up to two initials of the name (or the username), in capitals. */
export function initials(name: string): string {
  const words = name.split(/[\s_.-]+/).filter(Boolean)
  const letters = words.length > 1 ? [words[0], words[words.length - 1]].map((w) => [...w][0]) : [...(words[0] ?? '?')].slice(0, 1)
  return letters.join('').toLocaleUpperCase('en')
}

/** "3:42 PM · Nov 23, 2026" in UTC, the look of a post's time line. */
export function formatPostTime(date: Date): string {
  const time = date.toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit', timeZone: 'UTC' })
  const day = date.toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' })
  return `${time} · ${day}`
}

/** The text cut with an ellipsis to fit `width` px at `size`. */
function fitOneLine(set: ReturnType<typeof fontSet>, text: string, size: number, width: number): string {
  if (measure(set, text) * size <= width) return text
  let chars = [...text]
  while (chars.length > 1 && measure(set, `${chars.join('')}…`) * size > width) chars = chars.slice(0, -1)
  return `${chars.join('').trimEnd()}…`
}

const ICONS = {
  reply: 'M4 5h16a2 2 0 0 1 2 2v9a2 2 0 0 1-2 2h-8l-5 4v-4H4a2 2 0 0 1-2-2V7a2 2 0 0 1 2-2z',
  repost: 'M7 7h10v4l5-5-5-5v4H5v8h2zM17 17H7v-4l-5 5 5 5v-4h12v-8h-2z',
  like: 'M12 21s-8-5.2-8-11a4.5 4.5 0 0 1 8-2.8A4.5 4.5 0 0 1 20 10c0 5.8-8 11-8 11z',
}

export async function fakepostScene(job: FakepostJob): Promise<Scene> {
  const { input } = job
  const colours = THEMES[input.theme]
  const sans = fontSet('sans')
  const bold = fontSet('sans-bold')
  const width = FAKEPOST_WIDTH
  const pad = 48
  const avatarSize = 104
  const parts: string[] = []

  // Header: avatar, name with the verified mark, @username.
  if (job.avatar) {
    const png = await sharp(job.avatar).rotate().resize(avatarSize * 2, avatarSize * 2, { fit: 'cover' }).png({ compressionLevel: 1 }).toBuffer()
    parts.push(
      `<clipPath id="plaza-avatar"><circle cx="${pad + avatarSize / 2}" cy="${pad + avatarSize / 2}" r="${avatarSize / 2}"/></clipPath>`,
      `<image x="${pad}" y="${pad}" width="${avatarSize}" height="${avatarSize}" clip-path="url(#plaza-avatar)" preserveAspectRatio="xMidYMid slice" href="data:image/png;base64,${png.toString('base64')}"/>`,
    )
  } else {
    const seed = createHash('sha256').update(input.username.toLowerCase()).digest()[0]
    const fill = AVATAR_COLOURS[seed % AVATAR_COLOURS.length]
    const letters = initials(input.name || input.username)
    const size = letters.length > 1 ? 40 : 48
    parts.push(`<circle cx="${pad + avatarSize / 2}" cy="${pad + avatarSize / 2}" r="${avatarSize / 2}" fill="${fill}"/>`)
    parts.push(drawLines(bold, [layoutLine(bold, letters)], { x: pad + avatarSize / 2, y: pad + avatarSize / 2 - (size * 1.2) / 2, size, lineHeight: 1.2, align: 'middle', attributes: 'fill="#ffffff"' }))
  }
  const headerX = pad + avatarSize + 24
  const nameSize = 36
  const headerWidth = width - headerX - pad
  const name = fitOneLine(bold, input.name || input.username, nameSize, headerWidth - (input.verified ? 56 : 0))
  parts.push(drawLines(bold, [layoutLine(bold, name)], { x: headerX, y: pad + 6, size: nameSize, lineHeight: 1.25, align: 'start', attributes: `fill="${colours.text}"` }))
  if (input.verified) {
    const cx = headerX + measure(bold, name) * nameSize + 30
    const cy = pad + 6 + (nameSize * 1.25) / 2
    parts.push(
      `<circle cx="${cx}" cy="${cy}" r="18" fill="#1d9bf0"/>`,
      `<path d="M${cx - 8} ${cy + 1} l6 6 l11 -12" fill="none" stroke="#ffffff" stroke-width="4.5" stroke-linecap="round" stroke-linejoin="round"/>`,
    )
  }
  const handle = fitOneLine(sans, `@${input.username}`, 30, headerWidth)
  parts.push(drawLines(sans, [layoutLine(sans, handle)], { x: headerX, y: pad + 56, size: 30, lineHeight: 1.25, align: 'start', attributes: `fill="${colours.muted}"` }))

  // The post.
  const length = [...input.text].length
  const textSize = length <= 140 ? 46 : length <= 400 ? 40 : 34
  const lineHeight = 1.4
  const lines = wrap(sans, input.text, (width - 2 * pad) / textSize)
  let y = pad + avatarSize + 32
  parts.push(drawLines(sans, lines, { x: pad, y, size: textSize, lineHeight, align: 'start', attributes: `fill="${colours.text}"` }))
  y += lines.length * textSize * lineHeight + 24

  // Time, then the counts between two rules.
  const time = fitOneLine(sans, input.time, 30, width - 2 * pad)
  parts.push(drawLines(sans, [layoutLine(sans, time)], { x: pad, y, size: 30, lineHeight: 1.3, align: 'start', attributes: `fill="${colours.muted}"` }))
  y += 30 * 1.3 + 24
  parts.push(`<rect x="${pad}" y="${y}" width="${width - 2 * pad}" height="2" fill="${colours.border}"/>`)
  y += 28
  const counts: Array<[keyof typeof ICONS, number, string]> = [
    ['reply', input.replies, colours.muted],
    ['repost', input.reposts, colours.muted],
    ['like', input.likes, '#f91880'],
  ]
  const column = (width - 2 * pad) / 3
  counts.forEach(([icon, n, colour], i) => {
    const x = pad + i * column
    parts.push(`<path transform="translate(${x} ${y}) scale(1.6)" d="${ICONS[icon]}" fill="${icon === 'like' ? colour : 'none'}" stroke="${colour}" stroke-width="1.6" stroke-linejoin="round"/>`)
    parts.push(drawLines(bold, [layoutLine(bold, compactCount(n))], { x: x + 52, y: y - 2, size: 30, lineHeight: 1.3, align: 'start', attributes: `fill="${colours.text}"` }))
  })
  y += 40 + 26
  parts.push(`<rect x="${pad}" y="${y}" width="${width - 2 * pad}" height="2" fill="${colours.border}"/>`)
  y += 24

  // The generated mark: bottom right, small but plain to see.
  const markSize = 22
  const markWidth = measure(bold, GENERATED_MARK) * markSize + 36
  parts.push(`<rect x="${width - pad - markWidth}" y="${y}" width="${markWidth}" height="${markSize * 1.9}" rx="${markSize * 0.95}" fill="${colours.mark}"/>`)
  parts.push(drawLines(bold, [layoutLine(bold, GENERATED_MARK)], { x: width - pad - markWidth / 2, y: y + markSize * 0.35, size: markSize, lineHeight: 1.2, align: 'middle', attributes: `fill="${colours.markText}"` }))
  y += markSize * 1.9 + pad

  const height = Math.round(y)
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><title>${escapeXml(GENERATED_MARK)}</title><rect width="${width}" height="${height}" fill="${colours.background}"/>${parts.join('')}</svg>`
  return { svg, width, height }
}

