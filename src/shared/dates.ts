const DAY_MS = 86_400_000
/** 10000-01-01T00:00:00Z: from here on `toISOString` writes a six-digit, signed year. */
const YEAR_10000_MS = 253_402_300_800_000
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'))
/** `YYYY-MM-DD ` by day since the epoch: every page of an answer formats dates, mostly of a few days. */
const dayPrefixes = new Map<number, string>()
const DAY_PREFIXES_MAX = 4096

/** Formats an instant as the API's date-time: UTC, `YYYY-MM-DD HH:MM:SS`. */
export function formatDateTime(value: Date | number): string {
  const ms = typeof value === 'number' ? value : value.getTime()
  // Outside 1970-9999 (and for an invalid date, which throws as toISOString does) the long way.
  if (!(ms >= 0 && ms < YEAR_10000_MS)) return new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
  const day = Math.floor(ms / DAY_MS)
  let prefix = dayPrefixes.get(day)
  if (prefix === undefined) {
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 10) + ' '
    if (dayPrefixes.size >= DAY_PREFIXES_MAX) dayPrefixes.clear()
    dayPrefixes.set(day, prefix)
  }
  const seconds = Math.floor((ms - day * DAY_MS) / 1000)
  return prefix + TWO_DIGITS[Math.floor(seconds / 3600)] + ':' + TWO_DIGITS[Math.floor(seconds / 60) % 60] + ':' + TWO_DIGITS[seconds % 60]
}

/** Parses the API's date-time (UTC) back into a Date. */
export function parseDateTime(value: string): Date {
  return new Date(value.replace(' ', 'T') + 'Z')
}
