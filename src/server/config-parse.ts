/** What every configuration reader shares (config.ts, delivery/config.ts): the error a mistake is, and reading durations. */

/** A configuration mistake: `plaza serve` prints its message (never a secret's value) and exits 2. */
export class ConfigError extends Error {}

/** Reads a duration in milliseconds: a bare number in `bareUnit`, or a number with a unit (`500ms`, `30s`, `15m`, `24h`, `7d`). */
export function parseDuration(name: string, value: string | undefined, fallback: number, bareUnit: 'ms' | 's' = 'ms'): number {
  if (value === undefined || value.trim() === '') return fallback
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(value)
  if (!match) throw new ConfigError(`${name}: cannot read "${value}" (use milliseconds, or e.g. 30s, 15m, 24h)`)
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? bareUnit).toLowerCase() as 'ms']
  return Math.round(Number(match[1]) * unit)
}

