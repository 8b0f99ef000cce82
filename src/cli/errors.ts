/**
 * The one error format of the CLI: every failure is one line on stderr, `Error: <message>`, never
 * oclif's ` ›   Error:` blocks or a stack trace (unless DEBUG is set, for whoever debugs the CLI).
 * Commands print through their `catch`; the not-found hook prints through `printError` too.
 */
import { Errors } from '@oclif/core'

/**
 * Squeezes a message onto one line: oclif's usage errors span several ("Missing 1 required arg:",
 * then `name  description` rows, then "See more help with --help"; "Parsing --port", then the reason).
 */
export function oneLine(message: string): string {
  const lines = message
    .split('\n')
    .map((line) => line.replace(/^\s*›\s*/, '').trim())
    .filter((line) => line && !/^See more help with --help$/.test(line))
  let out = ''
  let listing = false
  for (const line of lines) {
    const row = /^(\S+)\s{2,}(.+)$/.exec(line)
    const text = row ? `${row[1]} (${row[2]})` : line
    if (!out) out = text
    else if (out.endsWith(':')) {
      out += ` ${text}`
      listing = true
    } else out += listing ? `, ${text}` : `: ${text}`
  }
  return out.replace(/\s{2,}/g, ' ')
}

/** Writes `Error: …` (and, with DEBUG set, the stack), then ends the command with `exit`. */
export function printError(message: string, exit: number, error?: unknown): never {
  process.stderr.write(`Error: ${oneLine(message)}\n`)
  if (process.env.DEBUG && (error as Error | undefined)?.stack) process.stderr.write(`${(error as Error).stack}\n`)
  throw new Errors.ExitError(exit)
}

/** oclif's own errors (parse errors, this.error) carry their exit code; anything else is 1. */
export function oclifExit(error: unknown): number | undefined {
  return error instanceof Errors.CLIError ? (error as Errors.CLIError & { oclif?: { exit?: number } }).oclif?.exit : undefined
}
