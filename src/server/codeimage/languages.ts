/**
 * Languages: shiki names and aliases for an explicit `language`, and detection when it is
 * omitted. shiki has no detector, so highlight.js's relevance scoring over a set of common
 * languages decides, after a few sure signs (shebang, JSON, doctype) that need no scoring.
 */
import { bundledLanguagesInfo } from 'shiki'
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
  [/^\s*(async\s+)?def \w+\(.*\)\s*(->\s*[\w\[\], .]+)?:\s*$/m, 'python'],
  [/^\s*class \w+(\(.*\))?:\s*$/m, 'python'],
  [/System\.out\.print|public static void main\s*\(\s*String/, 'java'],
  [/^\s*package main\b/m, 'go'],
  [/^\s*fn main\s*\(\)/m, 'rust'],
]

/** Guesses the shiki language of a snippet; plain text when nothing is convincing. */
export function detectLanguage(code: string): string {
  const text = code.trim()
  const shebang = /^#!(.*)/.exec(text)
  if (shebang) for (const [pattern, language] of SHEBANGS) if (pattern.test(shebang[1])) return language
  for (const [pattern, language] of SURE_SIGNS) if (pattern.test(text)) return language
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
  const result = hljs.highlightAuto(text.slice(0, 20_000), Object.keys(DETECTORS))
  if (!result.language || result.relevance < 3) return PLAIN_TEXT
  if (result.language === 'xml' && !/<\/?(html|head|body|div|span|p|a|script|style)\b/i.test(text)) return 'xml'
  return HLJS_TO_SHIKI[result.language] ?? result.language
}
