/**
 * Languages: shiki names and aliases for an explicit `language`, and detection when it is
 * omitted. shiki has no detector. Detection goes: sure signs (shebang, JSON, doctype and
 * one-line constructs that name their language, such as `console.log(` or `#include <iostream>`),
 * then highlight.js's relevance scoring when it is confident (longer code), then flourite's
 * keyword points (good on one-liners such as `const x = 1`), then highlight.js's weaker guess.
 * test/codeimage/detect.test.ts measures it on a table of short snippets.
 */
import { bundledLanguagesInfo } from 'shiki'
import detectWithFlourite from 'flourite'
import hljs from 'highlight.js/lib/core'
import bash from 'highlight.js/lib/languages/bash'
import c from 'highlight.js/lib/languages/c'
import cpp from 'highlight.js/lib/languages/cpp'
import csharp from 'highlight.js/lib/languages/csharp'
import css from 'highlight.js/lib/languages/css'
import diff from 'highlight.js/lib/languages/diff'
import dockerfile from 'highlight.js/lib/languages/dockerfile'
import elixir from 'highlight.js/lib/languages/elixir'
import go from 'highlight.js/lib/languages/go'
import graphql from 'highlight.js/lib/languages/graphql'
import haskell from 'highlight.js/lib/languages/haskell'
import ini from 'highlight.js/lib/languages/ini'
import java from 'highlight.js/lib/languages/java'
import javascript from 'highlight.js/lib/languages/javascript'
import json from 'highlight.js/lib/languages/json'
import kotlin from 'highlight.js/lib/languages/kotlin'
import lua from 'highlight.js/lib/languages/lua'
import makefile from 'highlight.js/lib/languages/makefile'
import markdown from 'highlight.js/lib/languages/markdown'
import php from 'highlight.js/lib/languages/php'
import powershell from 'highlight.js/lib/languages/powershell'
import python from 'highlight.js/lib/languages/python'
import ruby from 'highlight.js/lib/languages/ruby'
import rust from 'highlight.js/lib/languages/rust'
import scala from 'highlight.js/lib/languages/scala'
import scss from 'highlight.js/lib/languages/scss'
import sql from 'highlight.js/lib/languages/sql'
import swift from 'highlight.js/lib/languages/swift'
import typescript from 'highlight.js/lib/languages/typescript'
import xml from 'highlight.js/lib/languages/xml'
import yaml from 'highlight.js/lib/languages/yaml'

/** Plain text: no highlighting. */
export const PLAIN_TEXT = 'text'

const byName = new Map<string, string>()
for (const info of bundledLanguagesInfo) {
  for (const name of [info.id, info.name, ...(info.aliases ?? [])]) byName.set(name.toLowerCase(), info.id)
}
for (const name of ['text', 'txt', 'plain', 'plaintext']) byName.set(name, PLAIN_TEXT)

/** The shiki id of a language name or alias (any case), or null when shiki has no such language. */
export function resolveLanguage(name: string): string | null {
  return byName.get(name.trim().toLowerCase()) ?? null
}

/** The language of a file name by its extension or well-known name (`Dockerfile`), or null. */
export function languageOfFile(file: string): string | null {
  const base = file.split(/[\\/]/).pop() ?? file
  const dot = base.lastIndexOf('.')
  return resolveLanguage(dot > 0 ? base.slice(dot + 1) : base)
}

const DETECTORS = {
  bash, c, cpp, csharp, css, diff, dockerfile, elixir, go, graphql, haskell, ini, java, javascript, json,
  kotlin, lua, makefile, markdown, php, powershell, python, ruby, rust, scala, scss, sql, swift, typescript, xml, yaml,
}
for (const [name, language] of Object.entries(DETECTORS)) hljs.registerLanguage(name, language)

/** highlight.js names that shiki spells differently. */
const HLJS_TO_SHIKI: Record<string, string> = { xml: 'html', dockerfile: 'docker', ini: 'ini' }

const SHEBANGS: Array<[RegExp, string]> = [
  [/\b(ba|z|k)?sh\b/, 'bash'],
  [/\bnode\b|\bdeno\b|\bbun\b/, 'javascript'],
  [/\bpython[\d.]*\b/, 'python'],
  [/\bruby\b/, 'ruby'],
  [/\bperl\b/, 'perl'],
  [/\bphp\b/, 'php'],
]

/** Constructs that settle the question where relevance scoring is known to stumble. */
const SURE_SIGNS: Array<[RegExp, string]> = [
  [/^\s*(async\s+)?def \w+\(.*\)\s*(->\s*[\w\[\], .]+)?:/m, 'python'],
  [/^\s*class \w+(\(.*\))?:\s*$/m, 'python'],
  [/System\.out\.print|public static void main\s*\(\s*String/, 'java'],
  [/^\s*package main\b/m, 'go'],
  [/^\s*fn main\s*\(\)/m, 'rust'],
]

/**
 * Signs of a language in a few lines: they decide short snippets outright, and longer code only
 * when highlight.js is not confident (a TypeScript file may well call `console.log`).
 */
const SHORT_SIGNS: Array<[RegExp, string]> = [
  [/^\s*import [\w.]+( as \w+)?\s*$|^\s*from [\w.]+ import [\w*]/m, 'python'],
  [/^\s*print\((["'f]|\w+\)?\s*$)|\bin range\(/m, 'python'],
  [/^\s*public (final |abstract )*class \w+( extends \w+)?( implements [\w, ]+)?\s*\{/m, 'java'],
  [/\bConsole\.Write(Line)?\(|^\s*using System(\.[\w.]+)?;/m, 'csharp'],
  [/^\s*package main\b|\bfmt\.Print|^\s*\w+(\s*,\s*\w+)* := /m, 'go'],
  [/^\s*fn \w+\s*[<(]|\b(println|format|vec|panic)!\(|\blet mut \w+|::new\(\)/m, 'rust'],
  [/#include\s*<(iostream|vector|string|map|memory|algorithm)>|\bstd::\w+/, 'cpp'],
  [/#include\s*[<"][\w/]+\.h[>"]/, 'c'],
  [/^\s*(select\s[\s\S]*?(\bfrom\b|;|$)|insert\s+into\s|update\s+\w+\s+set\s|delete\s+from\s|create\s+(table|index|view)\s|drop\s+table\s|alter\s+table\s)/i, 'sql'],
  [/\b(console|document|window)\.\w+|^\s*import\s+[\w{}\s,*]+\s+from\s+['"]|\brequire\(['"]/m, 'javascript'],
  [/^\s*require(_relative)? ['"]|^\s*puts\s/m, 'ruby'],
  [/^\s*(\$ )?(sudo|npm|npx|yarn|pnpm|pip3?|brew|apt(-get)?|git|curl|wget|docker|kubectl|cd|ls|mkdir|chmod|export)\s|^\s*echo\s+\$\w/m, 'bash'],
  [/^\s*func \w+\s*\(.*\)\s*->/m, 'swift'],
  [/^\s*(fun \w+\s*\(|val \w+\s*(:\s*\w+\s*)?=)/m, 'kotlin'],
  [/^\s*local \w+\s*=|^\s*local function\s/m, 'lua'],
  [/^(\s*(#.*|- .*|[\w.-]+:(\s+[^\s{;][^;]*)?)(\n|$))+$/, 'yaml'],
  [/(^|\s)\*\*\w[^*\n]*\*\*(\s|$|[.,:;!?])|\[[^\]\n]+\]\(https?:\/\/[^)\s]+\)/, 'markdown'],
  [/^\s*FROM\s+[\w./-]+(:[\w.-]+)?(\s+AS\s+\w+)?\s*$/m, 'docker'],
]

/** flourite's names (with its `shiki` option) that shiki spells differently or lacks. */
const FLOURITE_TO_SHIKI: Record<string, string> = { dockerfile: 'docker', 'c++': 'cpp', 'c#': 'csharp' }
/** The points flourite must give a language before its word counts (prose scores 1-2 for Lua). */
const FLOURITE_MIN_POINTS = 3

/** flourite's guess, when it is more than noise: its best language and its points. */
function flouriteGuess(text: string): string | null {
  // flourite's types describe its CommonJS build; an ESM import gets the function itself.
  const flourite = detectWithFlourite as unknown as typeof detectWithFlourite.default
  const result = flourite(text, { shiki: true, noUnknown: false })
  if (!result.language || result.language === 'unknown') return null
  const points = Math.max(...Object.entries(result.statistics).filter(([name]) => name !== 'Unknown').map(([, n]) => Number(n)))
  if (points < FLOURITE_MIN_POINTS) return null
  const language = FLOURITE_TO_SHIKI[result.language] ?? result.language
  return resolveLanguage(language)
}

/** Snippets of up to this many lines are short: their signs decide before any scoring. */
const SHORT_LINES = 3

/** highlight.js relevance at which its guess is taken before flourite's (a few lines of real code reach it). */
const CONFIDENT_RELEVANCE = 10

/**
 * How much of a snippet the scorers read: highlight.js's relevance scoring runs every detector over
 * it, and over a 10 KB snippet cost four times the render itself; the first 2,000 characters
 * (some 50 lines) name the language as well.
 */
const DETECTION_SAMPLE = 2_000

/** Guesses the shiki language of a snippet; plain text when nothing is convincing. */
export function detectLanguage(code: string): string {
  const text = code.trim()
  const shebang = /^#!(.*)/.exec(text)
  if (shebang) for (const [pattern, language] of SHEBANGS) if (pattern.test(shebang[1])) return language
  if (/^<\?php/.test(text)) return 'php'
  if (/^<!doctype html|^<html[\s>]/i.test(text)) return 'html'
  if (/^[[{]/.test(text)) {
    try {
      JSON.parse(text)
      return 'json'
    } catch {
      // not JSON: let the scorer decide
    }
  }
  for (const [pattern, language] of SURE_SIGNS) if (pattern.test(text)) return language
  const sign = SHORT_SIGNS.find(([pattern]) => pattern.test(text))?.[1]
  const short = text.split('\n', SHORT_LINES + 1).length <= SHORT_LINES
  if (sign && short) return sign
  const sample = text.slice(0, DETECTION_SAMPLE)
  const scored = hljs.highlightAuto(sample, Object.keys(DETECTORS))
  const fromHljs = () => {
    if (!scored.language) return PLAIN_TEXT
    if (scored.language === 'xml' && !/<\/?(html|head|body|div|span|p|a|script|style)\b/i.test(text)) return 'xml'
    return HLJS_TO_SHIKI[scored.language] ?? scored.language
  }
  if (scored.language && scored.relevance >= CONFIDENT_RELEVANCE) return fromHljs()
  if (sign) return sign
  const guess = flouriteGuess(sample)
  if (guess) return guess
  if (!scored.language || scored.relevance < 3) return PLAIN_TEXT
  return fromHljs()
}
