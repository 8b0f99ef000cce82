/**
 * The one error format of the CLI: every failure is one line on stderr, `Error: <message>`, never
 * oclif's ` ›   Error:` blocks or a stack trace (unless DEBUG is set, for whoever debugs the CLI).
 * Commands print through their `catch`; the not-found hook prints through `printError` too.
 */
import { Errors } from '@oclif/core'

/** Squeezes a message onto one line: oclif's usage errors span several, with a "See more help" tail. */
export function oneLine(message: string): string {
  return message
    .split('\n')
    .map((line) => line.replace(/^\s*›\s*/, '').trim())
    .filter((line) => line && !/^See more help with --help$/.test(line))
    .join(' ')
    .replace(/\s{2,}/g, ' ')
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
