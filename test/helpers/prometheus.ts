/**
 * A strict reader of Prometheus' text exposition format (0.0.4), as a scraper reads it: throws on
 * any line it would reject (bad names, escapes or values, a TYPE after its samples, a sample of no
 * declared family, a duplicate series, histogram buckets that are not cumulative).
 */
import type { Services } from '../../src/server/services.js'

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Family {
  name: string
  help: string
  type: string
  samples: Sample[]
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] }

/** A value as Prometheus reads it (Go's ParseFloat): special values in any case, so prom-client's `Nan` is one. */
function parseValue(text: string, line: string): number {
  if (/^nan$/i.test(text)) return NaN
  if (/^\+?inf(inity)?$/i.test(text)) return Infinity
  if (/^-inf(inity)?$/i.test(text)) return -Infinity
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`not a sample value: ${line}`)
  return Number(text)
}

/** Reads `{a="x",b="y"}` starting at `start` (the brace); returns the labels and where it ended. */
function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {}
  let i = start + 1
  while (line[i] !== '}') {
    const eq = line.indexOf('=', i)
    if (eq < 0) throw new Error(`unterminated labels: ${line}`)
    const name = line.slice(i, eq).trim()
    if (!LABEL_NAME.test(name) || name in labels) throw new Error(`bad or repeated label name "${name}": ${line}`)
    if (line[eq + 1] !== '"') throw new Error(`label value must be quoted: ${line}`)
    let value = ''
    let j = eq + 2
    for (; j < line.length && line[j] !== '"'; j++) {
      if (line[j] !== '\\') {
        value += line[j]
        continue
      }
      const next = line[++j]
      if (next === 'n') value += '\n'
      else if (next === '\\' || next === '"') value += next
      else throw new Error(`bad escape in a label value: ${line}`)
    }
    if (j >= line.length) throw new Error(`unterminated label value: ${line}`)
    labels[name] = value
    i = j + 1
    if (line[i] === ',') i++
    else if (line[i] !== '}') throw new Error(`expected , or } after a label: ${line}`)
  }
  return { labels, end: i + 1 }
}

export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline')
  const families = new Map<string, Family>()
  const seen = new Set<string>()
  const familyOf = (name: string): Family | undefined => {
    const exact = families.get(name)
    if (exact) return exact
    for (const family of families.values()) if ((SUFFIXES[family.type] ?? []).some((suffix) => name === family.name + suffix)) return family
    return undefined
  }
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line)
      if (!match) continue // a plain comment
      const [, keyword, name, rest] = match
      if (!NAME.test(name)) throw new Error(`bad metric name: ${line}`)
      const family = families.get(name) ?? { name, help: '', type: 'untyped', samples: [] }
      families.set(name, family)
      if (keyword === 'HELP') family.help = rest.replace(/\\(n|\\)/g, (_, c) => (c === 'n' ? '\n' : '\\'))
      else {
        if (!TYPES.has(rest)) throw new Error(`unknown type: ${line}`)
        if (family.samples.length > 0) throw new Error(`TYPE after the family's samples: ${line}`)
        family.type = rest
      }
      continue
    }
    const nameEnd = line.search(/[{ ]/)
    if (nameEnd < 0) throw new Error(`a sample needs a value: ${line}`)
    const name = line.slice(0, nameEnd)
    if (!NAME.test(name)) throw new Error(`bad sample name: ${line}`)
    let labels: Record<string, string> = {}
    let rest = line.slice(nameEnd)
    if (line[nameEnd] === '{') {
      const parsed = parseLabels(line, nameEnd)
      labels = parsed.labels
      rest = line.slice(parsed.end)
    }
    const parts = rest.trim().split(/\s+/)
    if (parts.length < 1 || parts.length > 2 || !rest.startsWith(' ')) throw new Error(`bad sample: ${line}`)
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`bad timestamp: ${line}`)
    const family = familyOf(name)
    if (!family) throw new Error(`a sample of no declared family: ${line}`)
    const key = name + JSON.stringify(Object.entries(labels).sort())
    if (seen.has(key)) throw new Error(`duplicate series: ${line}`)
    seen.add(key)
    if (family.type === 'histogram' && name.endsWith('_bucket') && !('le' in labels)) throw new Error(`a bucket without le: ${line}`)
    family.samples.push({ name, labels, value: parseValue(parts[0], line) })
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family)
  return families
}

/** Each series' buckets never decrease and its +Inf bucket equals its count. */
function checkHistogram(family: Family) {
  const series = new Map<string, { buckets: Array<[number, number]>; count?: number }>()
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels
    const key = JSON.stringify(Object.entries(rest).sort())
    const entry = series.get(key) ?? { buckets: [] }
    series.set(key, entry)
    if (sample.name.endsWith('_bucket')) entry.buckets.push([parseValue(le, le), sample.value])
    if (sample.name.endsWith('_count')) entry.count = sample.value
  }
  for (const [key, { buckets, count }] of series) {
    buckets.sort((a, b) => a[0] - b[0])
    for (let i = 1; i < buckets.length; i++) if (buckets[i][1] < buckets[i - 1][1]) throw new Error(`${family.name}${key}: buckets decrease`)
    const inf = buckets.at(-1)
    if (!inf || inf[0] !== Infinity || inf[1] !== count) throw new Error(`${family.name}${key}: the +Inf bucket is not the count`)
  }
}

/** The value of the one sample of `name` whose labels include `labels`, or undefined. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v)) return sample.value
    }
  }
  return undefined
}

/**
 * Resolves once the server has recorded every request it answered. A client can hold its answer
 * before the server's `finish` event (where requests are recorded) has run, so a test that reads
 * the figures right after its requests waits here first: until no request is in flight.
 */
export async function whenRecorded(services: Services): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const families = await services.metrics!.collect()
    const inFlight = families.find((family) => family.name === 'plaza_http_requests_in_flight')?.values[0]?.value
    if (inFlight === 0) return
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error('requests stayed in flight')
}
