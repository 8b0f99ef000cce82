/**
 * A reader worker: one read-only connection to the database file, its statements cached by SQL
 * text, answering one query at a time in the shape drizzle's sqlite-proxy driver expects.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { openConnection, StatementCache, toSqlValue } from './connection.js'
import type { ReadRequest, ReadResponse } from './readers.js'

const port = parentPort
if (!port) throw new Error('reader-worker.ts runs as a worker thread')

const connection = openConnection((workerData as { file: string }).file, { readOnly: true })
const statements = new StatementCache(connection)

function answer({ sql, params, method }: ReadRequest): unknown[] {
  const statement = statements.get(sql)
  const args = params.map(toSqlValue)
  // `raw` is a flag on the statement and stays set; only statements that return rows accept it.
  if (!statement.reader) {
    statement.run(args)
    return []
  }
  statement.raw(true)
  if (method === 'time') {
    // Read to the end, answer nothing: the pages visited are the point (db/warm.ts).
    for (const _ of statement.iterate(args));
    return []
  }
  if (method !== 'get') return statement.all(args)
  const row = statement.get(args)
  return row === undefined ? [] : [row]
}

port.on('message', (request: ReadRequest) => {
  let response: ReadResponse
  try {
    const started = performance.now()
    const rows = answer(request)
    response = request.method === 'time' ? { id: request.id, rows, ms: performance.now() - started } : { id: request.id, rows }
  } catch (error) {
    const { message, code, rawCode } = error as { message: string; code?: string; rawCode?: number }
    response = { id: request.id, error: { message, code, rawCode } }
  }
  port.postMessage(response)
})
