import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { createParser } from 'eventsource-parser'
import { tempDir } from '../helpers/server.js'

/** Reads a whole Server-Sent Events answer: each `data:` payload, in order. */
export async function readEvents(response: Response): Promise<string[]> {
  const events: string[] = []
  const parser = createParser({ onEvent: (event) => events.push(event.data) })
  const decoder = new TextDecoder()
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }))
  return events
}

/** POSTs JSON to the server and returns the raw response (for streams). */
export function post(url: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...init })
}

/** Writes a provider file (YAML) into a temp directory and returns its path. */
export function providerFile(yaml: string): string {
  const file = path.join(tempDir('plaza-chat-'), 'providers.yaml')
  writeFileSync(file, yaml)
  return file
}

export const USER_HI = [{ role: 'user', content: 'Hi' }]
