/**
 * Colour emoji for every renderer (code images, carbon, fakepost, meme, logo): text is split into
 * plain runs and emoji clusters, and each cluster is drawn from Twemoji's SVG for it
 * (`@twemoji/svg`, jdecked's Twemoji: code MIT, graphics CC-BY 4.0, credited in docs/maker.md).
 * Fonts carry no colour glyphs resvg can draw, so an emoji is a picture placed where its glyph
 * would be, one em square.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

/** One piece of a text: either plain characters or exactly one emoji (a whole ZWJ sequence, flag or keycap). */
export interface TextRun {
  text: string
  emoji: boolean
}

// Unicode's recommended-for-general-interchange emoji, as whole sequences (the `v` flag's
// property of strings). Built at run time: TypeScript's ES2022 target does not parse the `v` flag.
const EMOJI = new RegExp('\\p{RGI_Emoji}', 'gv')
const ZWJ = '\u200d'
const VARIATION_16 = /\ufe0f/g

/** Splits `text` into plain runs and one run per emoji, in order; plain text stays one run. */
export function splitEmoji(text: string): TextRun[] {
  const runs: TextRun[] = []
  let last = 0
  for (const match of text.matchAll(EMOJI)) {
    const start = match.index ?? 0
    if (start > last) runs.push({ text: text.slice(last, start), emoji: false })
    runs.push({ text: match[0], emoji: true })
    last = start + match[0].length
  }
  if (last < text.length) runs.push({ text: text.slice(last), emoji: false })
  return runs
}

/** Whether `text` holds any emoji (a cheap test before splitting). */
export function hasEmoji(text: string): boolean {
  EMOJI.lastIndex = 0
  const found = EMOJI.test(text)
  EMOJI.lastIndex = 0
  return found
}

const codePoints = (cluster: string): string => [...cluster].map((char) => char.codePointAt(0)!.toString(16)).join('-')

/**
 * Twemoji's file names: the code points in hex joined by `-`, with U+FE0F dropped unless the
 * sequence has a zero-width joiner (Twemoji's own rule); the other spelling is the fallback.
 */
function fileNames(cluster: string): string[] {
  const bare = codePoints(cluster.replace(VARIATION_16, ''))
  const full = codePoints(cluster)
  return cluster.includes(ZWJ) ? [full, bare] : [bare, full]
}

let directory: string | undefined
const twemojiDirectory = (): string =>
  (directory ??= path.dirname(createRequire(import.meta.url).resolve('@twemoji/svg/package.json')))

const CACHE_LIMIT = 512
const cache = new Map<string, string | null>()

/** The SVG document of one emoji cluster (a 36×36 viewBox), or undefined when Twemoji has none. */
export function emojiSvg(cluster: string): string | undefined {
  const cached = cache.get(cluster)
  if (cached !== undefined) return cached ?? undefined
  let svg: string | null = null
  for (const name of fileNames(cluster)) {
    try {
      svg = readFileSync(path.join(twemojiDirectory(), `${name}.svg`), 'utf8')
      break
    } catch {
      // not this spelling: try the next
    }
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!)
  cache.set(cluster, svg)
  return svg ?? undefined
}
