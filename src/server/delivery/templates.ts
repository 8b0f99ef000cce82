/**
 * The mail Plaza sends, as plain text and HTML with a subject, and how an operator replaces them:
 * files in `PLAZA_MAIL_TEMPLATES` named `<kind>.subject`, `<kind>.txt` and `<kind>.html` (any of
 * them; the rest stay built in), with `{{name}}` placeholders. Read and checked once at start-up: a
 * placeholder that does not exist stops the start (ConfigError) rather than sending mail with a
 * hole in it. Values are HTML-escaped in the HTML part.
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { ConfigError } from '../config-parse.js'

export const MAIL_KINDS = ['password_reset', 'verify_email'] as const
export type MailKind = (typeof MAIL_KINDS)[number]

/** What every template may use. */
export const MAIL_VARIABLES = ['username', 'link', 'token', 'expires_minutes', 'instance'] as const
export type MailVariables = Record<(typeof MAIL_VARIABLES)[number], string>

export interface MailTemplate {
  subject: string
  text: string
  html: string
}

export interface RenderedMail {
  subject: string
  text: string
  html: string
}

const page = (heading: string, body: string) => `<!doctype html>
<html><body style="font-family: -apple-system, Segoe UI, Roboto, sans-serif; color: #1a1a1a; max-width: 32rem; margin: 2rem auto; line-height: 1.5">
<h1 style="font-size: 1.3rem">${heading}</h1>
${body}
<p style="color: #666; font-size: 0.85rem">Sent by {{instance}}. If you did not ask for this, you can ignore this message.</p>
</body></html>
`

export const DEFAULT_TEMPLATES: Record<MailKind, MailTemplate> = {
  password_reset: {
    subject: 'Reset your password on {{instance}}',
    text: `Hello @{{username}},

Someone (we hope you) asked to reset the password of your account on {{instance}}.
Open this link to choose a new one:

{{link}}

Or enter this code in the app:

{{token}}

The link works once and for {{expires_minutes}} minutes. Every session of the account is logged out
when the password changes. If you did not ask for this, ignore this message: your password stays.
`,
    html: page(
      'Reset your password',
      `<p>Hello @{{username}},</p>
<p>Someone (we hope you) asked to reset the password of your account on {{instance}}.</p>
<p><a href="{{link}}" style="display: inline-block; padding: 0.6rem 1rem; background: #2f6fed; color: #fff; text-decoration: none; border-radius: 6px">Choose a new password</a></p>
<p>Or enter this code in the app:<br><code style="font-size: 0.95rem; word-break: break-all">{{token}}</code></p>
<p>The link works once and for {{expires_minutes}} minutes. Every session of the account is logged out when the password changes.</p>`,
    ),
  },
  verify_email: {
    subject: 'Confirm your email address on {{instance}}',
    text: `Hello @{{username}},

Please confirm that this is your email address for your account on {{instance}}:

{{link}}

Or enter this code in the app:

{{token}}

The link works once and for {{expires_minutes}} minutes.
`,
    html: page(
      'Confirm your email address',
      `<p>Hello @{{username}},</p>
<p>Please confirm that this is your email address for your account on {{instance}}.</p>
<p><a href="{{link}}" style="display: inline-block; padding: 0.6rem 1rem; background: #2f6fed; color: #fff; text-decoration: none; border-radius: 6px">Confirm my address</a></p>
<p>Or enter this code in the app:<br><code style="font-size: 0.95rem; word-break: break-all">{{token}}</code></p>
<p>The link works once and for {{expires_minutes}} minutes.</p>`,
    ),
  },
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_]+)\s*\}\}/g

function checkPlaceholders(file: string, text: string): void {
  for (const [, name] of text.matchAll(PLACEHOLDER)) {
    if (!(MAIL_VARIABLES as readonly string[]).includes(name)) {
      throw new ConfigError(`PLAZA_MAIL_TEMPLATES: ${file} uses {{${name}}}, which does not exist (use ${MAIL_VARIABLES.map((v) => `{{${v}}}`).join(', ')})`)
    }
  }
}

/** The built-in templates with the operator's files in `dir` put in their place; checked now. */
export function loadTemplates(dir: string | null): Record<MailKind, MailTemplate> {
  const templates = structuredClone(DEFAULT_TEMPLATES)
  if (!dir) return templates
  for (const kind of MAIL_KINDS) {
    for (const [part, extension] of [['subject', 'subject'], ['text', 'txt'], ['html', 'html']] as const) {
      const file = path.join(dir, `${kind}.${extension}`)
      if (!existsSync(file)) continue
      let text: string
      try {
        text = readFileSync(file, 'utf8')
      } catch (error) {
        throw new ConfigError(`PLAZA_MAIL_TEMPLATES: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? error})`)
      }
      if (part === 'subject') text = text.trim()
      if (!text) throw new ConfigError(`PLAZA_MAIL_TEMPLATES: ${file} is empty`)
      if (part === 'subject' && /[\r\n]/.test(text)) throw new ConfigError(`PLAZA_MAIL_TEMPLATES: ${file} must be one line`)
      checkPlaceholders(file, text)
      templates[kind][part] = text
    }
  }
  return templates
}

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Fills a template's placeholders; in the HTML part every value is escaped, in the subject line breaks are dropped. */
export function renderMail(template: MailTemplate, variables: MailVariables): RenderedMail {
  const fill = (text: string, encode: (value: string) => string) => text.replace(PLACEHOLDER, (_, name: keyof MailVariables) => encode(variables[name]))
  return {
    subject: fill(template.subject, (value) => value.replace(/[\r\n]+/g, ' ')),
    text: fill(template.text, (value) => value),
    html: fill(template.html, escapeHtml),
  }
}
