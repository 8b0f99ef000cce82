/** Turns a parsed request into a render job, refusing what the renderer should never see. */
import { TRPCError } from '@trpc/server'
import { DEFAULT_MAX_WIDTH, MAX_SNIPPET_BYTES, MAX_SNIPPET_LINES, parseBackgroundColor, type CodeImageOptions } from '../../shared/schemas/codeimage.js'
import { resolveLanguage } from './languages.js'
import type { CodeImageJob } from './renderer.js'
import { WINDOW } from './scene.js'

const bad = (message: string) => new TRPCError({ code: 'BAD_REQUEST', message })

/** Reads `"3-5,9"` (or an array of numbers) as 1-based line numbers within `lineCount`. */
export function parseHighlight(value: string | number[] | undefined, lineCount: number): number[] {
  if (value === undefined) return []
  const lines = new Set<number>()
  const parts = Array.isArray(value) ? value.map(String) : value.split(',').map((p) => p.trim()).filter(Boolean)
  for (const part of parts) {
    const match = /^(\d+)(?:\s*-\s*(\d+))?$/.exec(part)
    if (!match) throw bad(`highlightLines: cannot read "${part}"; use line numbers and ranges like "3-5,9"`)
    const from = Number(match[1])
    const to = Number(match[2] ?? match[1])
    if (from < 1 || to < from || to > lineCount) {
      throw bad(`highlightLines: "${part}" is not a range of lines within 1-${lineCount}`)
    }
    for (let n = from; n <= to; n++) lines.add(n)
  }
  return [...lines]
}

export function toRenderJob(o: CodeImageOptions): CodeImageJob {
  const code = o.codeSnippet
  if (code.trim() === '') throw bad('codeSnippet is required: send the code to render')
  const bytes = Buffer.byteLength(code, 'utf8')
  if (bytes > MAX_SNIPPET_BYTES) {
    throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `codeSnippet is ${bytes} bytes; the limit is ${MAX_SNIPPET_BYTES} bytes (${MAX_SNIPPET_BYTES / 1024} KiB)` })
  }
  const lineCount = code.replace(/\r\n?/g, '\n').replace(/\n+$/, '').split('\n').length
  if (lineCount > MAX_SNIPPET_LINES) {
    throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `codeSnippet has ${lineCount} lines; the limit is ${MAX_SNIPPET_LINES} lines` })
  }
  let language: string | null = null
  if (o.language && o.language.toLowerCase() !== 'auto') {
    language = resolveLanguage(o.language)
    if (!language) {
      throw bad(`Unknown language "${o.language}"; use a shiki language name or alias (typescript, ts, python, rust, go, ...), or omit it to detect the language`)
    }
  }
  if (!o.wrap && o.maxWidth) throw bad('wrap: false draws every line whole, so it takes no maxWidth; leave one of them out')
  if (!o.background && (o.backgroundColor !== undefined || o.backgroundImage !== undefined)) {
    throw bad('backgroundColor and backgroundImage draw the background, which background: false leaves out; drop one or the other')
  }
  if (o.backgroundImage !== undefined && !/^\/?uploads\/[\w./-]+$/.test(o.backgroundImage)) {
    throw bad('backgroundImage must be the uploads/... path of an image stored on this server (upload it first)')
  }
  const maxWidth = !o.wrap || o.maxWidth === 0 ? undefined : (o.maxWidth ?? DEFAULT_MAX_WIDTH)
  if (o.maxWidth) {
    const gutter = o.lineNumbers ? String(lineCount).length * 0.6 * o.fontSize + WINDOW.gutterGap : 0
    const room = o.maxWidth - 2 * o.padding - 2 * WINDOW.insetX - gutter
    if (room < 10 * 0.6 * o.fontSize) {
      throw bad(`maxWidth ${o.maxWidth} leaves room for fewer than 10 characters after a padding of ${o.padding}; raise maxWidth or lower padding or fontSize`)
    }
  }
  return {
    code,
    language,
    theme: o.theme,
    darkMode: o.darkMode,
    background: o.background,
    padding: o.padding,
    title: o.title,
    lineNumbers: o.lineNumbers,
    highlight: parseHighlight(o.highlightLines, lineCount),
    fontSize: o.fontSize,
    maxWidth,
    scale: o.scale,
    format: o.format,
    fontFamily: o.fontFamily,
    backgroundColor: o.backgroundColor === undefined ? undefined : parseBackgroundColor(o.backgroundColor)!,
    backgroundImage: o.backgroundImage?.replace(/^\//, ''),
    windowControls: o.windowControls,
  }
}
