/**
 * Markdown answers of `plaza util chat` for a terminal: headings, emphasis, lists, quotes, tables and
 * links by marked + marked-terminal (which also strips control characters a model could use to
 * send escape sequences), and code blocks highlighted by shiki with the tokenizer and the palette
 * of the code images (src/server/codeimage), into ANSI colours. Used only on a TTY: piped output
 * stays the model's own text. Imported lazily (marked-terminal and shiki are not small).
 *
 * `MarkdownStream` renders an answer as it streams: each block (up to a blank line outside a code
 * fence) once it is complete, so the terminal shows formatted text while the rest still arrives.
 */
import { Chalk, supportsColor, type ChalkInstance } from 'chalk'
import { Marked, type Token, type Tokens } from 'marked'
import { markedTerminal } from 'marked-terminal'
import { Tokenizer } from '../../server/codeimage/highlight.js'
import { PLAIN_TEXT, resolveLanguage } from '../../server/codeimage/languages.js'
import { THEMES, type Palette } from '../../server/codeimage/themes.js'

export interface MarkdownOptions {
  /** chalk's colour level: 0 none, 1 basic, 2 256 colours, 3 truecolor (default: what stdout supports; 0 with NO_COLOR). */
  colorLevel?: 0 | 1 | 2 | 3
  /** Width for rules and tables (default: the terminal's, else 80). */
  width?: number
}

export interface MarkdownRenderer {
  /** The text for the terminal, with trailing blank lines trimmed. */
  render(markdown: string): Promise<string>
}

/** The code images' default theme (candy), dark: terminals are mostly dark. */
const PALETTE: Palette = THEMES.candy.dark
const INDENT = '    '
/**
 * shiki's time limit per line, past which the rest of the line stays uncoloured: its default,
 * 500 ms, can pass on a busy machine while the grammar's patterns compile on the first lines.
 */
const TOKENIZE_LIMIT_MS = 5_000

let tokenizer: Promise<Tokenizer> | undefined

export function defaultColorLevel(): 0 | 1 | 2 | 3 {
  if (process.env.NO_COLOR) return 0
  return (supportsColor ? supportsColor.level : 0) as 0 | 1 | 2 | 3
}

export function createMarkdownRenderer(options: MarkdownOptions = {}): MarkdownRenderer {
  const chalk = new Chalk({ level: options.colorLevel ?? defaultColorLevel() })
  const highlighted = new Map<string, string>()
  const key = (lang: string, code: string) => `${lang}\u0000${code}`
  const marked = new Marked(
    markedTerminal(styles(chalk, options.width ?? (process.stdout.columns || 80))),
    {
      renderer: {
        // Filled in by render() before parsing (shiki loads languages asynchronously; marked renders synchronously).
        code(token: Tokens.Code) {
          const lang = languageOf(token.lang)
          const text = (lang && highlighted.get(key(lang, token.text))) ?? chalk.hex(PALETTE.foreground)(stripControl(token.text))
          return text.split('\n').map((line) => INDENT + line).join('\n') + '\n\n'
        },
      },
    },
  )
  return {
    async render(markdown) {
      const blocks: Tokens.Code[] = []
      marked.walkTokens(marked.lexer(markdown), (token: Token) => {
        if (token.type === 'code') blocks.push(token as Tokens.Code)
      })
      for (const block of blocks) {
        const lang = languageOf(block.lang)
        if (!lang || chalk.level === 0 || highlighted.has(key(lang, block.text))) continue
        highlighted.set(key(lang, block.text), await highlight(chalk, stripControl(block.text), lang))
      }
      return (marked.parse(markdown) as string).replace(/\s+$/, '')
    },
  }
}

/** A fence's language as shiki knows it, or null (no language, or one shiki has not). */
function languageOf(info: string | undefined): string | null {
  const name = info?.trim().split(/\s+/)[0]
  if (!name) return null
  const lang = resolveLanguage(name)
  return lang && lang !== PLAIN_TEXT ? lang : null
}

async function highlight(chalk: ChalkInstance, code: string, lang: string): Promise<string> {
  try {
    const lines = await (await (tokenizer ??= Tokenizer.create())).tokenize(code, lang, TOKENIZE_LIMIT_MS)
    return lines.map((line) => line.map((token) => chalk.hex(PALETTE[token.role])(token.text)).join('')).join('\n')
  } catch {
    tokenizer = undefined
    return chalk.hex(PALETTE.foreground)(code)
  }
}

/** C0/C1 controls but tab and newline: what marked-terminal strips from all other text. */
function stripControl(text: string): string {
  return text.replace(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g, '')
}

function styles(chalk: ChalkInstance, width: number) {
  return {
    code: chalk.hex(PALETTE.foreground),
    blockquote: chalk.gray.italic,
    html: chalk.gray,
    heading: chalk.green.bold,
    firstHeading: chalk.magenta.underline.bold,
    hr: chalk.reset,
    listitem: chalk.reset,
    table: chalk.reset,
    paragraph: chalk.reset,
    strong: chalk.bold,
    em: chalk.italic,
    codespan: chalk.hex(PALETTE.string),
    del: chalk.dim.gray.strikethrough,
    link: chalk.blue,
    href: chalk.blue.underline,
    width,
    // Emoji shortcodes (:tada:) are left as the model wrote them.
    emoji: false,
  }
}

/** Is `text` (from the start of a block) inside an open code fence at its end? */
function insideFence(text: string): boolean {
  let fence: string | null = null
  for (const line of text.split('\n')) {
    const match = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (!match) continue
    if (fence === null) fence = match[1]
    else if (match[1][0] === fence[0] && match[1].length >= fence.length && line.trim() === match[1]) fence = null
  }
  return fence !== null
}

/**
 * An answer rendered as it arrives: `push` returns the rendered blocks that the new text completed
 * (nothing while a block is still open), `end` the rest. `pending()` is the raw text of the block
 * still arriving, for a live view.
 */
export class MarkdownStream {
  #text = ''
  #done = 0

  constructor(private readonly renderer: MarkdownRenderer) {}

  async push(delta: string): Promise<string> {
    this.#text += delta
    // The last blank line after which nothing is left inside a code fence ends the complete blocks.
    let end = -1
    for (let at = this.#text.indexOf('\n\n', this.#done); at !== -1; at = this.#text.indexOf('\n\n', at + 1)) {
      if (!insideFence(this.#text.slice(this.#done, at))) end = at
    }
    if (end === -1) return ''
    const blocks = this.#text.slice(this.#done, end)
    this.#done = end + 2
    return blocks.trim() ? (await this.renderer.render(blocks)) + '\n\n' : ''
  }

  pending(): string {
    return this.#text.slice(this.#done)
  }

  async end(): Promise<string> {
    const rest = this.#text.slice(this.#done)
    this.#done = this.#text.length
    return rest.trim() ? await this.renderer.render(rest) : ''
  }
}
