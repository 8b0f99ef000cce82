/**
 * The baseline: a bare node:http server, its own process, answering every request with the one
 * answer its parent last sent over IPC (status, headers, body bytes captured from Plaza). It reads
 * and discards the request body, as any server must. Prints `listening on URL` like plaza serve.
 */
import http from 'node:http'

interface Answer {
  status: number
  headers: Record<string, string>
  body: string // base64
}

let status = 200
let headers: Record<string, string> = { 'content-type': 'text/plain', 'content-length': '2' }
let body = Buffer.from('ok')

process.on('message', (message: { type: 'answer'; answer: Answer }) => {
  if (message?.type !== 'answer') return
  body = Buffer.from(message.answer.body, 'base64')
  status = message.answer.status
  headers = { ...message.answer.headers, 'content-length': String(body.length) }
  process.send!({ type: 'ready' })
})

const server = http.createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    res.writeHead(status, headers)
    res.end(body)
  })
})
server.keepAliveTimeout = 65_000
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number }
  process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
process.on('disconnect', () => process.exit(0))
