import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { formatDateTime, parseDateTime } from '../../src/shared/dates.js'

/** The API's date-time by its definition: the ISO form, UTC, to the second, with a space. */
const byDefinition = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ')

test('formats as the ISO form to the second, day boundaries and both ends of the fast range included', () => {
  const edges = [0, 1, 999, 1000, 59_999, 3_599_999, 86_399_999, 86_400_000, 951_782_400_000, 253_402_300_799_999]
  // Outside 1970-9999 the long way: before the epoch, and six-digit years.
  const outside = [-1, -86_400_001, -62_167_219_200_001, 253_402_300_800_000]
  for (const ms of [...edges, ...outside]) assert.is(formatDateTime(ms), byDefinition(ms), String(ms))
  let seed = 7
  for (let i = 0; i < 5000; i++) {
    seed = (seed * 48271) % 2147483647
    const ms = Math.floor((seed / 2147483647) * 253_402_300_799_999)
    assert.is(formatDateTime(ms), byDefinition(ms))
    assert.is(formatDateTime(new Date(ms)), byDefinition(ms))
  }
  assert.is(formatDateTime(Date.UTC(2026, 10, 23, 22, 5, 9, 999)), '2026-11-23 22:05:09')
})

test('an invalid date throws, as toISOString does', () => {
  assert.throws(() => formatDateTime(Number.NaN), RangeError)
  assert.throws(() => formatDateTime(new Date('not a date')), RangeError)
  assert.throws(() => formatDateTime(Number.POSITIVE_INFINITY), RangeError)
})

test('parses what it formats', () => {
  const ms = Date.UTC(2024, 1, 29, 23, 59, 59)
  assert.is(parseDateTime(formatDateTime(ms)).getTime(), ms)
})

test.run()
