/**
 * The loopback server under the fake providers (test/providers/fake-providers.ts,
 * test/search/fake-search.ts): every request is read whole and recorded, then answered by the
 * next scripted behaviour, or by the protocol's default answer when the script is empty. A
 * behaviour or default that throws answers 500 with the error, as a broken provider would.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A scripted answer: JSON with `status` (a string body is sent as is). */
export const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(typeof body === 'string' ? body : JSON.stringify(body))
  }

/** A scripted answer that never comes (until the caller gives up or the server closes). */
export const hang = (): void => {}

export interface ScriptedServer<Recorded, Behaviour> {
  url: string
  requests: Recorded[]
  enqueue(...behaviours: Behaviour[]): void
  close(): Promise<void>
}

export async function startScriptedServer<Recorded, Behaviour extends (req: IncomingMessage, res: ServerResponse, ...rest: any[]) => unknown>(options: {
  /** What a test sees of a request: its parts, the body parsed as the protocol does. */
  record(req: IncomingMessage, body: Buffer, url: URL): Recorded | Promise<Recorded>
  /** Runs a scripted behaviour on the recorded request. */
  play(behaviour: Behaviour, req: IncomingMessage, res: ServerResponse, recorded: Recorded): unknown
  /** The protocol's answer when nothing is scripted. */
  answer(req: IncomingMessage, res: ServerResponse, recorded: Recorded, url: URL): unknown
}): Promise<ScriptedServer<Recorded, Behaviour>> {
  const requests: Recorded[] = []
  const script: Behaviour[] = []
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const url = new URL(req.url ?? '/', 'http://fake')
    try {
      const recorded = await options.record(req, Buffer.concat(chunks), url)
      requests.push(recorded)
      const next = script.shift()
      if (next) await options.play(next, req, res, recorded)
      else await options.answer(req, res, recorded, url)
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: String(error) }))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    enqueue: (...behaviours) => void script.push(...behaviours),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
