/** A loopback web site for the media tests and bench: pages with oEmbed, OpenGraph and Twitter tags, and pages that misbehave. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, site: Site) => void

export interface Site {
  url: string
  port: number
  /** Bytes written by the endless page before its reader hung up. */
  endlessWritten: number
  route(path: string, handler: Handler): void
  html(path: string, body: string | Buffer, type?: string): void
  close(): Promise<void>
}

export async function startSite(): Promise<Site> {
  const routes = new Map<string, Handler>()
  const held = new Set<http.ServerResponse>()
  const server = http.createServer((req, res) => {
    const handler = routes.get(new URL(req.url!, 'http://x').pathname)
    if (!handler) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<title>Not found</title>')
    handler(req, res, site)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const site: Site = {
    url: `http://127.0.0.1:${port}`,
    port,
    endlessWritten: 0,
    route: (path, handler) => void routes.set(path, handler),
    html: (path, body, type = 'text/html; charset=utf-8') => void routes.set(path, (_req, res) => res.writeHead(200, { 'content-type': type }).end(body)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  // Never answers: the client's own time limit has to end the wait.
  site.route('/slow', (_req, res) => void held.add(res))
  // A head that never ends: written for as long as the reader reads.
  site.route('/endless', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.write('<!doctype html><html><head><title>Endless</title>')
    const line = `<meta name="filler" content="${'x'.repeat(1000)}">\n`
    const pump = () => {
      while (!res.destroyed && res.write(line)) site.endlessWritten += line.length
      if (!res.destroyed) res.once('drain', pump)
    }
    res.on('close', () => res.destroy())
    pump()
  })
  return site
}

/** A video page the way big sites write them: oEmbed discovery, OpenGraph and Twitter tags, a relative thumbnail. */
export function videoPage(oembedHref: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8">
<title>Page title | Example Tube</title>
<meta name="description" content="Plain description">
<link rel="canonical" href="/watch/abc">
<link rel="alternate" type="application/json+oembed" href="${oembedHref}" title="oEmbed">
<link rel="alternate" type="text/xml+oembed" href="/oembed.xml">
<meta property="og:site_name" content="Example Tube">
<meta property="og:type" content="video.other">
<meta property="og:title" content="OpenGraph title">
<meta property="og:description" content="OpenGraph &amp; description">
<meta property="og:image" content="../img/thumb.jpg">
<meta property="og:video:url" content="https://tube.example/embed/abc">
<meta property="og:video:type" content="text/html">
<meta property="og:video:width" content="1280">
<meta property="og:video:height" content="720">
<meta name="twitter:card" content="player">
<meta name="twitter:title" content="Twitter title">
<meta name="twitter:creator" content="@maker">
<meta name="twitter:image" content="https://cdn.example/twitter.jpg">
</head><body><h1>Video</h1><meta property="og:title" content="Too late, in the body"></body></html>`
}
