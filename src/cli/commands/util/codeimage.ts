import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Args, Flags } from '@oclif/core'
import { CODE_IMAGE_THEMES, MAX_SNIPPET_BYTES, type CodeImageInput } from '../../../shared/schemas/codeimage.js'
import { PlazaCommand, UsageError } from '../../base.js'
import { remoteFetch } from '../../client.js'

export interface CodeImageOutput {
  output: string
  format: 'png' | 'svg'
  width: number
  height: number
  language: string
}

export default class UtilCodeimage extends PlazaCommand<typeof UtilCodeimage> {
  static override description = 'Render a code snippet as an image in the style of ray.so (PNG, or SVG with --format svg).'
  static override examples = [
    '<%= config.bin %> util codeimage src/main.rs',
    '<%= config.bin %> util codeimage app.ts -o app.png --theme breeze --light --line-numbers --highlight 3-5',
    'cat query.sql | <%= config.bin %> util codeimage - --language sql -o query.png',
    '<%= config.bin %> util codeimage script.py --no-background --format svg --url http://127.0.0.1:8080',
  ]
  static override args = {
    file: Args.string({ description: 'the file to render; - or nothing reads standard input', required: false }),
  }
  static override flags = {
    output: Flags.string({ char: 'o', description: 'where to write the image (- for stdout); default: the file name with .png or .svg' }),
    theme: Flags.string({ description: 'ray.so theme', options: [...CODE_IMAGE_THEMES], default: 'candy' }),
    dark: Flags.boolean({ description: 'dark window (the default)', exclusive: ['light'] }),
    light: Flags.boolean({ description: 'light window', exclusive: ['dark'] }),
    background: Flags.boolean({ description: 'draw the gradient background (--no-background: transparent)', default: true, allowNo: true }),
    padding: Flags.integer({ description: 'padding around the window: 16, 32, 64 or 128 (0-256)', min: 0, max: 256, default: 64 }),
    language: Flags.string({ description: 'shiki language name or alias; default: from the file extension, else detected' }),
    title: Flags.string({ description: 'title in the window bar; default: the file name' }),
    'line-numbers': Flags.boolean({ description: 'number the lines' }),
    highlight: Flags.string({ description: 'lines to highlight, e.g. 3-5,9' }),
    format: Flags.string({ description: 'image format', options: ['png', 'svg'], default: 'png' }),
    scale: Flags.integer({ description: 'pixel density, 1-4', min: 1, max: 4, default: 2 }),
    'font-size': Flags.integer({ description: 'code font size in CSS pixels, 8-64', min: 8, max: 64 }),
    'max-width': Flags.integer({ description: 'widest image in CSS pixels; longer lines wrap', min: 200, max: 4000 }),
  }

  async run(): Promise<CodeImageOutput> {
    const { flags } = this
    const file = this.args.file && this.args.file !== '-' ? this.args.file : null
    const code = file ? await readSource(file) : await readStdin()
    const format = flags.format as 'png' | 'svg'
    const input: CodeImageInput = {
      codeSnippet: code,
      theme: flags.theme,
      darkMode: !flags.light,
      background: flags.background,
      padding: flags.padding,
      language: flags.language ?? (file ? await languageOf(file) : undefined),
      title: flags.title ?? (file ? path.basename(file) : ''),
      lineNumbers: flags['line-numbers'],
      highlightLines: flags.highlight,
      fontSize: flags['font-size'],
      maxWidth: flags['max-width'],
      scale: flags.scale,
      format,
    }
    const image = this.target.kind === 'remote' ? await renderRemote(this.target.url, input) : await renderEmbedded(input)
    const output = flags.output ?? defaultOutput(file, format)
    if (output === '-') process.stdout.write(image.data)
    else await writeFile(output, image.data)
    if (output !== '-') this.human(output)
    return { output, format: image.format, width: image.width, height: image.height, language: image.language }
  }
}

interface Rendered {
  data: Uint8Array
  format: 'png' | 'svg'
  width: number
  height: number
  language: string
}

async function readSource(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new UsageError(`cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message}`)
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('give a FILE, or pipe the code in (e.g. `cat main.go | plaza util codeimage -`)')
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length
    // Read a little past the limit so the renderer's own 413 message explains it.
    if (size > MAX_SNIPPET_BYTES * 2) break
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** The language of a file by its extension; null leaves it to detection (the server knows shiki's names). */
async function languageOf(file: string): Promise<string | undefined> {
  const { languageOfFile } = await import('../../../server/codeimage/languages.js')
  return languageOfFile(file) ?? undefined
}

function defaultOutput(file: string | null, format: 'png' | 'svg'): string {
  if (!file) return `snippet.${format}`
  const base = path.basename(file)
  const dot = base.lastIndexOf('.')
  return `${dot > 0 ? base.slice(0, dot) : base}.${format}`
}

async function renderEmbedded(input: CodeImageInput): Promise<Rendered> {
  // The renderer alone: no database or data directory is needed to draw a picture.
  const { createCodeImageService } = await import('../../../server/codeimage/service.js')
  const service = createCodeImageService({ env: process.env })
  try {
    return await service.render(input)
  } finally {
    await service.close()
  }
}

async function renderRemote(url: string, input: CodeImageInput): Promise<Rendered> {
  let response
  try {
    response = await remoteFetch(`${url}/api/codeimage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: input.format === 'svg' ? 'image/svg+xml' : 'image/png' },
      body: JSON.stringify(input),
    })
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    throw new Error(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`)
  }
  const type = response.headers.get('content-type') ?? ''
  if (!response.ok) {
    const body = type.includes('json') ? ((await response.json()) as { message?: string }) : null
    throw new Error(body?.message ?? `unexpected answer from ${url} (HTTP ${response.status}): is it a Plaza server?`)
  }
  if (!type.startsWith('image/')) throw new Error(`unexpected answer from ${url} (${type || 'no content type'}): is it a Plaza server?`)
  return {
    data: new Uint8Array(await response.arrayBuffer()),
    format: type.startsWith('image/svg') ? 'svg' : 'png',
    width: Number(response.headers.get('x-image-width')),
    height: Number(response.headers.get('x-image-height')),
    language: response.headers.get('x-code-language') ?? '',
  }
}
