/**
 * The write client's rows (local-client.ts) have the shape @libsql/client gives them, which
 * drizzle's libsql driver reads both ways: values by index (not enumerable) and by column name
 * (enumerable, the first of a name wins), including for odd column names.
 */
import { rmSync } from 'node:fs'
import path from 'node:path'
import { createClient } from '@libsql/client'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { LocalClient } from '../../src/server/db/local-client.js'
import { tempDir } from '../helpers/server.js'

const QUERIES = [
  `SELECT 1 AS id, 'ann' AS name, NULL AS bio, 2.5 AS score, x'0102' AS blob`,
  `SELECT 1 AS a, 2 AS a, 3 AS b`,
  `SELECT 7 AS length, 8 AS "0", 9 AS "1", 10 AS "5", 11 AS "__proto__", 12 AS constructor, 13 AS toString`,
  `SELECT value AS n FROM json_each('[1,2,3]')`,
  `SELECT 1 AS n WHERE 0`,
]

/** A blob's bytes (this client gives a Buffer, @libsql/client an ArrayBuffer: not what is compared here). */
const plain = (value: unknown) => (value instanceof ArrayBuffer ? [...new Uint8Array(value)] : Buffer.isBuffer(value) ? [...value] : value)

/** Everything a reader of a row can see of it. */
function describeRow(row: Record<string, unknown> & ArrayLike<unknown>) {
  return {
    keys: Object.keys(row),
    byName: Object.keys(row).map((key) => plain(row[key])),
    length: row.length,
    values: Array.from(row, plain),
    sliced: Array.prototype.slice.call(row).length,
    json: JSON.stringify(Object.fromEntries(Object.entries(row).map(([key, value]) => [key, plain(value)]))),
  }
}

test('rows read by the write client look as @libsql/client shapes them', async () => {
  const dir = tempDir()
  const file = path.join(dir, 'rows.db')
  const local = new LocalClient(file)
  const reference = createClient({ url: `file:${file}` })
  try {
    for (const sql of QUERIES) {
      // Twice: the second answer comes from the statement's kept description.
      for (let round = 0; round < 2; round++) {
        const mine = await local.execute(sql)
        const theirs = await reference.execute(sql)
        assert.equal(mine.columns, theirs.columns, sql)
        assert.equal(mine.rows.map(describeRow), theirs.rows.map(describeRow), sql)
      }
    }
    // A write that returns rows, and one that does not, on the same client.
    await local.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
    const returned = await local.execute({ sql: 'INSERT INTO t (v) VALUES (?) RETURNING id, v', args: ['x'] })
    assert.equal(describeRow(returned.rows[0] as never).json, '{"id":1,"v":"x"}')
    const inserted = await local.execute({ sql: 'INSERT INTO t (v) VALUES (?)', args: ['y'] })
    assert.equal([inserted.rows.length, inserted.rowsAffected, inserted.lastInsertRowid], [0, 1, 2n])
  } finally {
    local.close()
    reference.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
