import type { CodeImageJob } from './renderer.js'

/**
 * A small render that loads what a first real render would (fonts, shiki and its TypeScript
 * grammar, the WASM of resvg and sharp) and fills the glyph atlas with printable ASCII at the
 * default size and scale.
 */
export const WARM_UP_JOB: CodeImageJob = {
  code: `// ${Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('')}\nexport const answer = { value: 42, ok: true } as const`,
  language: 'typescript',
  theme: 'candy',
  darkMode: true,
  background: true,
  padding: 64,
  title: 'warm-up.ts',
  lineNumbers: false,
  highlight: [],
  fontSize: 15,
  scale: 2,
  format: 'png',
}
