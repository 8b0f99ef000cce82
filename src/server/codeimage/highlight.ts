/**
 * Syntax highlighting with shiki, the way ray.so does it: a css-variables theme whose token
 * colours are named roles (keyword, string, ...) that each ray.so palette fills in.
 */
import { createCssVariablesTheme, createHighlighter, type Highlighter, type BundledLanguage } from 'shiki'
import type { Palette } from './themes.js'
import { PLAIN_TEXT } from './languages.js'

export type Role = keyof Omit<Palette, 'highlight' | 'highlightBorder'>

export interface Token {
  text: string
  role: Role
}

const PREFIX = '--ray-'
const THEME = 'plaza-ray'

const ROLES: Record<string, Role> = {
  foreground: 'foreground',
  'token-constant': 'constant',
  'token-string': 'string',
  'token-comment': 'comment',
  'token-keyword': 'keyword',
  'token-parameter': 'parameter',
  'token-function': 'function',
  'token-string-expression': 'stringExpression',
  'token-punctuation': 'punctuation',
  'token-link': 'link',
  'token-number': 'number',
  'token-property': 'property',
}

/** The css-variables theme whose colours are ray.so's roles (the benchmark's browser side highlights with it too). */
export function rayTheme() {
  const theme = createCssVariablesTheme({ name: THEME, variablePrefix: PREFIX, fontStyle: false })
  // ray.so's palettes colour numbers and properties on their own; shiki's variables theme folds them into constants.
  const rules = (theme.tokenColors ?? theme.settings ?? []) as Array<{ scope: string | string[]; settings: { foreground?: string } }>
  rules.push(
    { scope: ['constant.numeric'], settings: { foreground: `var(${PREFIX}token-number)` } },
    {
      scope: ['support.type.property-name', 'meta.object-literal.key', 'variable.other.property', 'variable.other.object.property', 'entity.other.attribute-name'],
      settings: { foreground: `var(${PREFIX}token-property)` },
    },
  )
  return theme
}

function roleOf(color: string | undefined): Role {
  const name = color && /^var\(--ray-([\w-]+)/.exec(color)?.[1]
  return (name && ROLES[name]) || 'foreground'
}

/** How long shiki may spend on one line before it leaves the rest uncoloured. */
const LINE_TIME_LIMIT_MS = 10_000

/** A highlighter that loads each language the first time it is asked for. */
export class Tokenizer {
  private constructor(private readonly highlighter: Highlighter) {}

  static async create(): Promise<Tokenizer> {
    return new Tokenizer(await createHighlighter({ themes: [rayTheme()], langs: [] }))
  }

  /**
   * The snippet's lines as tokens with their colour roles; `language` must be a shiki id (or `text`).
   * `timeLimitMs`: shiki's time limit per line (default LINE_TIME_LIMIT_MS), past which the rest of the line is
   * one uncoloured token; on a busy machine the first lines (compiling the grammar's patterns) can take that long.
   */
  async tokenize(code: string, language: string, timeLimitMs?: number): Promise<Token[][]> {
    if (language === PLAIN_TEXT) return code.split('\n').map((line) => (line ? [{ text: line, role: 'foreground' }] : []))
    if (!this.highlighter.getLoadedLanguages().includes(language)) await this.highlighter.loadLanguage(language as BundledLanguage)
    // shiki gives up on a line after 500 ms by default and leaves the rest of it uncoloured: on a
    // loaded machine the first line of a fresh worker (compiling the grammar's expressions) can take
    // that long. The pool's time budget (PLAZA_CODEIMAGE_TIMEOUT_MS) bounds a render instead.
    const lines = this.highlighter.codeToTokensBase(code, { lang: language as BundledLanguage, theme: THEME as 'none', tokenizeTimeLimit: timeLimitMs ?? LINE_TIME_LIMIT_MS })
    return lines.map((line) => line.map((token) => ({ text: token.content, role: roleOf(token.color) })))
  }
}
