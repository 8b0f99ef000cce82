/** Raw HTTP over a socket, for requests no well-behaved client would send (truncated, stalled, malformed). */
import net from 'node:net'

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
  /** The parsed JSON body, when there is one. */
  json: any
}

/** Request lines no client library would send: each is a 400 in the envelope, never a 500. */
export const MALFORMED_TARGETS = [
  'GET http://a:99999/ HTTP/1.1',
  'GET http://[::1/ HTTP/1.1',
  'GET http://%zz/ HTTP/1.1',
  'GET http://a:99999/trpc/users.profile HTTP/1.1',
  'POST http://a:99999/api/mobile/auth/login HTTP/1.1',
  'GET http://a:99999/uploads/posts/x.jpg HTTP/1.1',
  'GET https://[fe80::1%25eth0]/health HTTP/1.1',
  'GET ftp://a/health HTTP/1.1',
  'GET * HTTP/1.1',
  'GET http://a/%E0 HTTP/1.1',
]

export function parseRawResponse(text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n')
  const head = end >= 0 ? text.slice(0, end) : text
  const [statusLine, ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  let body = end >= 0 ? text.slice(end + 4) : ''
  if (headers['transfer-encoding'] === 'chunked') {
    let decoded = ''
    for (let rest = body; rest; ) {
      const lineEnd = rest.indexOf('\r\n')
      const size = parseInt(rest.slice(0, lineEnd), 16)
      if (!size) break
      decoded += rest.slice(lineEnd + 2, lineEnd + 2 + size)
      rest = rest.slice(lineEnd + 2 + size + 2)
    }
    body = decoded
  }
  let json: any = null
  try {
    json = JSON.parse(body)
  } catch {}
  return { status: Number(statusLine.split(' ')[1]), headers, body, json }
}

export interface RawOptions {
  /** Keep the socket open for writing after `data` (a stalled client); it is closed once the answer arrives. */
  stall?: boolean
  /** Half-close after writing (the client is done sending, e.g. a truncated body). */
  end?: boolean
}

/** Writes `data` to the server as it is and resolves with what comes back when the server closes or answers in full. */
export function rawRequest(url: string, data: string | Buffer, { stall = false, end = !stall }: RawOptions = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname)
    let received = ''
    const finish = () => {
      socket.destroy()
      resolve(parseRawResponse(received))
    }
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1')
      const parsed = parseRawResponse(received)
      const length = Number(parsed.headers['content-length'])
      if (received.includes('\r\n\r\n') && Number.isFinite(length) && Buffer.byteLength(parsed.body, 'latin1') >= length) finish()
    })
    socket.on('end', finish)
    socket.on('close', finish)
    socket.on('error', (error) => (received ? finish() : reject(error)))
    socket.write(data)
    if (end) socket.end()
  })
}
