/**
 * `POST /api/execute`: the request and its limits. Shared by the handler, the OpenAPI document and
 * `plaza util run`.
 */
import { z } from 'zod'

/** Past these, a request is refused before anything runs. */
export const MAX_CODE_BYTES = 100 * 1024
export const MAX_STDIN_BYTES = 100 * 1024

/** The languages Plaza runs itself, by every name they answer to. */
export const LOCAL_LANGUAGES = {
  javascript: ['javascript', 'js', 'node', 'nodejs', 'quickjs'],
  python: ['python', 'py', 'python3', 'pyodide'],
} as const
export type LocalLanguage = keyof typeof LOCAL_LANGUAGES

/**
 * Piston's language names and aliases (its package index), so that a misspelt name is a 400 here
 * rather than a round trip; the provider still decides what it has installed.
 */
export const PISTON_LANGUAGES = [
  'bash', 'sh', 'c', 'gcc', 'cpp', 'c++', 'g++', 'csharp', 'cs', 'c#', 'dotnet', 'go', 'golang', 'java', 'kotlin', 'kt',
  'rust', 'rs', 'ruby', 'rb', 'php', 'perl', 'pl', 'lua', 'swift', 'typescript', 'ts', 'deno', 'haskell', 'hs', 'scala',
  'r', 'rscript', 'dart', 'elixir', 'exs', 'erlang', 'erl', 'clojure', 'clj', 'fsharp', 'fs', 'f#', 'julia', 'jl', 'nim',
  'ocaml', 'ml', 'crystal', 'cr', 'zig', 'd', 'dlang', 'fortran', 'f90', 'pascal', 'pas', 'cobol', 'cob', 'groovy',
  'powershell', 'ps1', 'prolog', 'racket', 'rkt', 'scheme', 'sqlite3', 'sql', 'vlang', 'v', 'brainfuck', 'bf', 'lisp',
  'basic', 'awk', 'coffeescript', 'coffee', 'emacs', 'el', 'forth', 'nasm', 'asm', 'octave', 'matlab', 'raku',
  'rakudo', 'sed', 'smalltalk', 'vb', 'vb.net', 'yeethon', 'python2', 'py2', 'cjam', 'golfscript', 'japt', 'husk', 'javascript-node',
] as const

/** A local language by any of its names, or null. */
export function localLanguageOf(name: string): LocalLanguage | null {
  for (const [language, names] of Object.entries(LOCAL_LANGUAGES)) if ((names as readonly string[]).includes(name)) return language as LocalLanguage
  return null
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8')

export const executeInput = z.object({
  language: z
    .string({ error: 'language must be a string, such as javascript or python' })
    .transform((value) => value.trim().toLowerCase())
    .refine((name) => localLanguageOf(name) !== null || (PISTON_LANGUAGES as readonly string[]).includes(name), {
      error: 'language is not one Plaza knows: javascript and python run here; others (go, rust, c, ...) through a Piston provider',
    }),
  code: z
    .string({ error: 'code must be a string' })
    .min(1, 'code is required')
    .refine((code) => bytes(code) <= MAX_CODE_BYTES, `code must be at most ${MAX_CODE_BYTES / 1024} KiB`),
  stdin: z
    .string({ error: 'stdin must be a string' })
    .refine((stdin) => bytes(stdin) <= MAX_STDIN_BYTES, `stdin must be at most ${MAX_STDIN_BYTES / 1024} KiB`)
    .optional(),
})
export type ExecuteInput = z.input<typeof executeInput>
export type ExecuteRequest = z.output<typeof executeInput>

/** The answer (`message` aside): what the program wrote, how it ended, how long it took. */
export interface ExecuteResult {
  stdout: string
  stderr: string
  exit_code: number
  timed_out: boolean
  /** The run itself. */
  duration_ms: number
  /** Before it: waiting for a place (other programs running), and for a sandbox to load (0 when one was ready). */
  queue_ms: number
  start_ms: number
  language: string
}
