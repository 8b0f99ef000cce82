/**
 * carbon.now.sh's options (validated by src/shared/schemas/carbon.ts) as a render job for the
 * code-image renderer: the theme's palette, the CSS background colour read into an sRGB colour,
 * carbon's CodeMirror modes read as shiki languages, the font family onto a font Plaza ships.
 */
import { TRPCError } from '@trpc/server'
import { MAX_SNIPPET_BYTES, MAX_SNIPPET_LINES } from '../../../shared/schemas/codeimage.js'
import type { CarbonOptions } from '../../../shared/schemas/carbon.js'
import { lookup } from '../../../shared/lookup.js'
import { resolveLanguage } from '../languages.js'
import type { CarbonJob, CarbonLook } from '../renderer.js'
import { CARBON_EDITOR } from './scene.js'

const bad = (message: string) => new TRPCError({ code: 'BAD_REQUEST', message })

/** carbon's CodeMirror modes (the `language` of its URLs) that are not shiki names. */
const CODEMIRROR_MODES: Record<string, string> = {
  clike: 'c',
  htmlmixed: 'html',
  shell: 'bash',
  mllike: 'ocaml',
  stex: 'latex',
  commonlisp: 'lisp',
  octave: 'matlab',
  'text/x-csrc': 'c',
  'text/x-c++src': 'cpp',
  'text/x-csharp': 'csharp',
  'text/x-java': 'java',
  'text/x-kotlin': 'kotlin',
  'text/x-scala': 'scala',
  'text/x-objectivec': 'objective-c',
  'text/x-go': 'go',
  'text/x-php': 'php',
  'text/x-mysql': 'sql',
  'text/x-diff': 'diff',
  'application/typescript': 'typescript',
  'application/json': 'json',
  'application/x-sh': 'bash',
}

const NAMED_COLORS: Record<string, string> = {
  transparent: 'rgba(0, 0, 0, 0)',
  white: '#ffffff',
  black: '#000000',
}

/**
 * A CSS colour as `#rrggbb`, or `rgba(r, g, b, a)` when it is not opaque; null when it cannot be read.
 * Reads `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb()`/`rgba()` (commas or spaces, alpha as a number or a percentage) and a few names.
 */
export function readCssColor(input: string): string | null {
  const value = (lookup(NAMED_COLORS, input.trim().toLowerCase()) ?? input).trim().toLowerCase()
  let r: number, g: number, b: number
  let a = 1
  const hex = /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(value)
  if (hex) {
    const digits = hex[1].length <= 4 ? [...hex[1]].map((c) => c + c).join('') : hex[1]
    ;[r, g, b] = [0, 2, 4].map((i) => parseInt(digits.slice(i, i + 2), 16))
    if (digits.length === 8) a = parseInt(digits.slice(6, 8), 16) / 255
  } else {
    const fn = /^rgba?\(\s*([^)]*)\)$/.exec(value)
    if (!fn) return null
    const parts = fn[1].split(/\s*[,/]\s*|\s+/).filter(Boolean)
    if (parts.length < 3 || parts.length > 4) return null
    const channel = (p: string) => (p.endsWith('%') ? (Number(p.slice(0, -1)) * 255) / 100 : Number(p))
    ;[r, g, b] = parts.slice(0, 3).map(channel)
    if (parts[3] !== undefined) a = parts[3].endsWith('%') ? Number(parts[3].slice(0, -1)) / 100 : Number(parts[3])
    if (![r, g, b, a].every(Number.isFinite) || [r, g, b].some((c) => c < 0 || c > 255) || a < 0 || a > 1) return null
    ;[r, g, b] = [r, g, b].map(Math.round)
  }
  a = Math.round(a * 1000) / 1000
  if (a >= 1) return '#' + [r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')
  return `rgba(${r}, ${g}, ${b}, ${a})`
}

/** The font Plaza draws for a carbon font family (see the schema's CARBON_FONTS). */
function fontOf(family: string): CarbonLook['font'] {
  if (family === 'Hack' || family === 'DejaVu Sans Mono') return 'dejavu-sans-mono'
  const bundled = Object.entries(FONT_NAMES).find(([, name]) => name === family)?.[0] as CarbonLook['font'] | undefined
  return bundled ?? 'jetbrains-mono'
}

export const FONT_NAMES: Record<CarbonLook['font'], string> = {
  'jetbrains-mono': 'JetBrains Mono',
  'dejavu-sans-mono': 'DejaVu Sans Mono',
  'cascadia-code': 'Cascadia Code',
  'fira-code': 'Fira Code',
  'ibm-plex-mono': 'IBM Plex Mono',
  'source-code-pro': 'Source Code Pro',
}

export function toCarbonJob(o: CarbonOptions): CarbonJob {
  const code = o.code
  if (code.trim() === '') throw bad('code is required: send the code to render')
  const bytes = Buffer.byteLength(code, 'utf8')
  if (bytes > MAX_SNIPPET_BYTES) {
    throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `code is ${bytes} bytes; the limit is ${MAX_SNIPPET_BYTES} bytes (${MAX_SNIPPET_BYTES / 1024} KiB)` })
  }
  const lineCount = code.replace(/\r\n?/g, '\n').replace(/\n+$/, '').split('\n').length
  if (lineCount > MAX_SNIPPET_LINES) {
    throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `code has ${lineCount} lines; the limit is ${MAX_SNIPPET_LINES} lines` })
  }
  let language: string | null = null
  if (o.language && o.language.toLowerCase() !== 'auto') {
    const name = o.language.toLowerCase()
    language = resolveLanguage(lookup(CODEMIRROR_MODES, name) ?? name)
    if (!language) {
      throw bad(`Unknown language "${o.language}"; use a shiki language name or alias (javascript, python, rust, go, ...) or one of carbon's modes, or omit it to detect the language`)
    }
  }
  if (o.backgroundMode === 'image') throw bad('backgroundMode "image" is not supported: send backgroundColor (a CSS colour, or "transparent")')
  const background = readCssColor(o.backgroundColor)
  if (!background) {
    throw bad(`backgroundColor "${o.backgroundColor}" is not a colour Plaza reads; use #rrggbb, #rrggbbaa, rgb(r, g, b), rgba(r, g, b, a) or transparent`)
  }
  const width = o.widthAdjustment ? null : o.width
  if (width !== null && width - 2 * o.paddingHorizontal < CARBON_EDITOR.minWidth) {
    throw bad(`width ${width} leaves less than ${CARBON_EDITOR.minWidth}px for the window after a paddingHorizontal of ${o.paddingHorizontal}px on each side; raise width or lower paddingHorizontal`)
  }
  return {
    kind: 'carbon',
    code,
    language,
    look: {
      theme: o.theme,
      background,
      windowTheme: o.windowTheme,
      windowControls: o.windowControls,
      paddingVertical: o.paddingVertical,
      paddingHorizontal: o.paddingHorizontal,
      dropShadow: o.dropShadow ? { offsetY: o.dropShadowOffsetY, blur: o.dropShadowBlurRadius } : null,
      lineNumbers: o.lineNumbers,
      firstLineNumber: o.firstLineNumber,
      font: fontOf(o.fontFamily),
      fontSize: o.fontSize,
      lineHeight: o.lineHeight / 100,
      width,
      squared: o.squaredImage,
      title: o.titleBar,
    },
    scale: Number(o.exportSize.slice(0, 1)),
  }
}
