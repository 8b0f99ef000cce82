/**
 * GET /api/media on the real server, against a loopback web site (PLAZA_FETCH_ALLOW_PRIVATE=1):
 * oEmbed discovery, OpenGraph, Twitter cards and plain HTML merged in their order, relative URLs
 * resolved, bounded reads of endless pages, the time limit, refused redirects, non-HTML and
 * malformed pages; known patterns answered without a fetch.
 */
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { startSite, videoPage, type Site } from './site.js'

let server: TestServer
let site: Site

const OEMBED = {
  version: '1.0',
  type: 'video',
  title: 'oEmbed title',
  author_name: 'Maker Studio',
  author_url: '/channel/maker',
  provider_name: 'Example Tube',
  html: '<iframe width="480" height="270" src="https://tube.example/embed/abc?feature=oembed&amp;x=1" frameborder="0" allowfullscreen></iframe>',
  width: 480,
  height: '270',
}

test.before(async () => {
  site = await startSite()
  // The longest allowed (10 s): loopback pages on a loaded machine are not cut short (the never-answering page has a server of its own).
  server = await startTestServer({ env: { PLAZA_FETCH_ALLOW_PRIVATE: '1', PLAZA_MEDIA_TIMEOUT: '10000' } })
  site.html('/media/video', videoPage('/oembed?url=%2Fmedia%2Fvideo&format=json'))
  site.route('/oembed', (_req, res) => res.writeHead(200, { 'content-type': 'application/json+oembed' }).end(JSON.stringify(OEMBED)))
  site.html('/media/og-only', videoPage('').replace(/<link rel="alternate" type="application\/json\+oembed"[^>]*>/, ''))
})
test.after(async () => {
  await server.close()
  await site.close()
})

const media = (query: string) => server.request('GET', `/api/media?${query}`)
const ask = (path: string) => media(`url=${encodeURIComponent(site.url + path)}`)

test('oEmbed > OpenGraph > Twitter > HTML: each field from the strongest source that has it, relative URLs resolved against the page', async () => {
  const res = await ask('/media/video')
  assert.is(res.status, 200, JSON.stringify(res.body))
  const body = res.body
  assert.is(body.message, 'Example Tube video: oEmbed title')
  assert.is(body.title, 'oEmbed title')
  assert.is(body.author, 'Maker Studio')
  assert.is(body.author_url, `${site.url}/channel/maker`)
  assert.is(body.provider, 'Example Tube')
  assert.is(body.site_name, 'Example Tube')
  assert.is(body.type, 'video')
  assert.is(body.description, 'OpenGraph & description')
  assert.is(body.thumbnail, `${site.url}/img/thumb.jpg`)
  assert.is(body.embed_url, 'https://tube.example/embed/abc?feature=oembed&x=1')
  assert.is(body.embed_html, OEMBED.html)
  assert.is(body.media, body.embed_url)
  assert.equal([body.width, body.height], [480, 270])
  assert.is(body.canonical_url, `${site.url}/watch/abc`)
  assert.is(body.url, `${site.url}/media/video`)
  assert.is(body.id, null)
  assert.is(body.fetched, true)
  assert.equal(body.warnings, [])
  assert.equal(body.source, {
    title: 'oembed', author: 'oembed', author_url: 'oembed', provider: 'oembed', site_name: 'opengraph', description: 'opengraph', type: 'oembed',
    thumbnail: 'opengraph', embed_url: 'oembed', width: 'oembed', height: 'oembed', embed_html: 'oembed', media: 'oembed', canonical_url: 'html',
  })
})

test('without oEmbed: OpenGraph wins over Twitter, Twitter over <title>; og:video (text/html) is the player', async () => {
  const { status, body } = await ask('/media/og-only')
  assert.is(status, 200, JSON.stringify(body))
  assert.is(body.title, 'OpenGraph title')
  assert.is(body.source.title, 'opengraph')
  assert.is(body.author, '@maker')
  assert.is(body.source.author, 'twitter')
  assert.is(body.embed_url, 'https://tube.example/embed/abc')
  assert.equal([body.width, body.height], [1280, 720])
  assert.match(body.embed_html, /^<iframe src="https:\/\/tube\.example\/embed\/abc" width="1280" height="720"/)
  assert.is(body.type, 'video')
  assert.is(body.source.type, 'opengraph')
})

test('Twitter card alone: title, relative image and player (an iframe of its size); <title> only when nothing else names one', async () => {
  site.html(
    '/cards/player',
    `<html><head><title>Plain title</title><meta name="twitter:card" content="player"><meta name="twitter:title" content="Card title">
     <meta name="twitter:image" content="/img/card.png"><meta name="twitter:player" content="player/1?autoplay=0&amp;t=2">
     <meta name="twitter:player:width" content="400"><meta name="twitter:player:height" content="300"></head><body></body></html>`,
  )
  const { body } = await ask('/cards/player')
  assert.is(body.title, 'Card title')
  assert.is(body.thumbnail, `${site.url}/img/card.png`)
  assert.is(body.embed_url, `${site.url}/cards/player/1?autoplay=0&t=2`)
  assert.is(body.embed_html, `<iframe src="${site.url}/cards/player/1?autoplay=0&amp;t=2" width="400" height="300" frameborder="0" allow="autoplay; encrypted-media; fullscreen; picture-in-picture" allowfullscreen></iframe>`)
  assert.equal([body.type, body.source.type, body.source.thumbnail], ['video', 'twitter', 'twitter'])

  site.html('/plain', '<html><head><title>  Just\n a   page </title><meta name="description" content="About it"><meta name="author" content="Ann"></head><body>hi</body></html>')
  const plain = await ask('/plain')
  assert.is(plain.body.message, 'A page: Just a page')
  assert.equal([plain.body.title, plain.body.description, plain.body.author, plain.body.type, plain.body.provider], ['Just a page', 'About it', 'Ann', 'link', null])
  assert.equal(plain.body.source, { title: 'html', author: 'html', description: 'html', canonical_url: 'http' })
  assert.is(plain.body.canonical_url, `${site.url}/plain`)
})

test('<base href> and charsets: relative URLs follow the base; a windows-1252 page is decoded as such', async () => {
  site.html('/based/page', '<html><head><base href="https://static.example/assets/"><meta property="og:image" content="t.png"><meta property="og:title" content="Based"></head></html>')
  const based = await ask('/based/page')
  assert.is(based.body.thumbnail, 'https://static.example/assets/t.png')
  const latin = Buffer.concat([Buffer.from('<html><head><meta charset="windows-1252"><title>Caf'), Buffer.from([0xe9, 0x20, 0x80]), Buffer.from('</title></head></html>')])
  site.html('/latin', latin, 'text/html')
  assert.is((await ask('/latin')).body.title, 'Café €')
})

test('malformed HTML: unquoted and unclosed tags still read; javascript: and data: URLs dropped', async () => {
  site.html(
    '/broken',
    `<html><head><meta property=og:title content=Unquoted><meta property="og:image" content="javascript:alert(1)">
     <meta name="twitter:image" content="data:image/png;base64,AAAA"><link rel=canonical href=/canon><title>Tom &amp; Jerry <b>bold`,
  )
  const { status, body } = await ask('/broken')
  assert.is(status, 200, JSON.stringify(body))
  assert.is(body.title, 'Unquoted')
  assert.is(body.thumbnail, null)
  assert.is(body.canonical_url, `${site.url}/canon`)
  site.html('/garbage', Buffer.from([0x3c, 0x68, 0x74, 0x6d, 0x6c, 0x3e, 0xff, 0xfe, 0x00, 0x3c, 0x2f, 0x3e, 0x3c, 0x3c, 0x3c]))
  const garbage = await ask('/garbage')
  assert.is(garbage.status, 200)
  assert.equal([garbage.body.title, garbage.body.type], [null, 'link'])
})

test('an endless head: read up to 512 KiB, answered with what it held and a warning; the rest is never read', async () => {
  const { status, body } = await ask('/endless')
  assert.is(status, 200, JSON.stringify(body))
  assert.is(body.title, 'Endless')
  assert.match(body.warnings.join(' '), /did not end within 512 KiB/)
  // Socket buffers take some more, but nowhere near what an unbounded read would have pulled in 1.5 s.
  assert.ok(site.endlessWritten < 16 * 1024 * 1024, `${site.endlessWritten} bytes written`)
})

test('a large page whose head ends early: only the head is read', async () => {
  site.html('/long', `<html><head><title>Long</title></head><body>${'<p>words</p>'.repeat(200_000)}<meta property="og:title" content="late"></body></html>`)
  const { body } = await ask('/long')
  assert.equal([body.title, body.warnings], ['Long', []])
})

test('a page that never answers: 504 within PLAZA_MEDIA_TIMEOUT', async () => {
  const impatient = await startTestServer({ env: { PLAZA_FETCH_ALLOW_PRIVATE: '1', PLAZA_MEDIA_TIMEOUT: '1500' } })
  try {
    const res = await impatient.request('GET', `/api/media?url=${encodeURIComponent(`${site.url}/slow`)}`)
    assert.is(res.status, 504)
    assert.match(res.body.message, /url: the server did not send the file within 1\.5 s/)
  } finally {
    await impatient.close()
  }
})

test('a redirect to a link-local address is refused (400), as is a private one on a server that does not allow them', async () => {
  site.route('/to-metadata', (_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end())
  const res = await ask('/to-metadata')
  assert.is(res.status, 400)
  assert.match(res.body.message, /url: 169\.254\.169\.254 is a link-local address; only public addresses are fetched/)
  const strict = await startTestServer()
  try {
    const refused = await strict.request('GET', `/api/media?url=${encodeURIComponent(`${site.url}/media/video`)}`)
    assert.is(refused.status, 400)
    assert.match(refused.body.message, /url: 127\.0\.0\.1 is a private or loopback address/)
  } finally {
    await strict.close()
  }
})

test('an oEmbed link that is broken, too large or refused costs only its own fields', async () => {
  site.html('/bad-oembed', videoPage('/not-json'))
  site.html('/not-json', '<html>not json</html>', 'application/json')
  const bad = await ask('/bad-oembed')
  assert.is(bad.status, 200)
  assert.equal([bad.body.title, bad.body.source.title], ['OpenGraph title', 'opengraph'])
  assert.match(bad.body.warnings.join(' '), /oembed: the answer is not oEmbed JSON/)
  site.html('/huge-oembed', videoPage('/huge.json'))
  site.html('/huge.json', JSON.stringify({ title: 'x'.repeat(100_000) }), 'application/json')
  assert.match((await ask('/huge-oembed')).body.warnings.join(' '), /oembed: the answer is larger than 64 KiB/)
  site.html('/evil-oembed', videoPage('http://169.254.169.254/oembed'))
  const evil = await ask('/evil-oembed')
  assert.is(evil.status, 200)
  assert.match(evil.body.warnings.join(' '), /oembed: 169\.254\.169\.254 is a link-local address/)
})

test('not HTML: a media file is described from its headers; other types are 415; errors upstream 422', async () => {
  const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#ff0000' } }).png().toBuffer()
  site.html('/pic.png', png, 'image/png')
  const pic = await ask('/pic.png')
  assert.is(pic.status, 200)
  assert.equal([pic.body.type, pic.body.media, pic.body.thumbnail, pic.body.source.type], ['image', `${site.url}/pic.png`, `${site.url}/pic.png`, 'http'])
  assert.is(pic.body.embed_html, `<img src="${site.url}/pic.png" alt="">`)
  site.html('/data.json', '{"a":1}', 'application/json')
  const json = await ask('/data.json')
  assert.is(json.status, 415)
  assert.match(json.body.message, /url: not an HTML page \(the server sent application\/json\)/)
  site.html('/untyped-text', 'just words, no markup', '')
  assert.is((await ask('/untyped-text')).status, 415)
  const missing = await ask('/nope')
  assert.is(missing.status, 422)
  assert.match(missing.body.message, /url: the server answered HTTP 404/)
})

test('fetch=false: the pattern alone, nothing fetched; an unknown URL is a plain link', async () => {
  const yt = await media(`url=${encodeURIComponent('https://youtu.be/dQw4w9WgXcQ?t=42')}&fetch=false`)
  assert.is(yt.status, 200)
  assert.is(yt.body.message, 'YouTube video (from the URL pattern, not fetched)')
  assert.equal(
    [yt.body.provider, yt.body.type, yt.body.id, yt.body.embed_url, yt.body.thumbnail, yt.body.fetched],
    ['YouTube', 'video', 'dQw4w9WgXcQ', 'https://www.youtube.com/embed/dQw4w9WgXcQ?start=42', 'https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg', false],
  )
  assert.match(yt.body.embed_html, /^<iframe src="https:\/\/www\.youtube\.com\/embed\/dQw4w9WgXcQ\?start=42"/)
  assert.is(yt.body.source.provider, 'pattern')
  // Not fetched: a loopback page's own title would otherwise show up.
  const other = await media(`url=${encodeURIComponent(`${site.url}/media/video`)}&fetch=0`)
  assert.equal([other.status, other.body.type, other.body.title, other.body.provider, other.body.message], [200, 'link', null, null, 'No known media pattern matches this URL (not fetched)'])
})

test('bad input: 400 naming the field, with the fetch guard\'s messages', async () => {
  const cases: Array<[string, RegExp]> = [
    ['', /url is required/],
    ['url=', /url is required/],
    ['url=not%20a%20url', /url: not a valid URL/],
    [`url=${encodeURIComponent('ftp://example.com/a')}`, /url: only http and https URLs can be fetched, not ftp/],
    [`url=${encodeURIComponent('javascript:alert(1)')}&fetch=false`, /url: only http and https URLs can be fetched, not javascript/],
    [`url=${encodeURIComponent('https://user:pw@example.com/')}`, /url: a URL with a user name or password is not fetched/],
    [`url=${'a'.repeat(2100)}`, /url is longer than 2048 characters/],
    [`url=https://youtu.be/dQw4w9WgXcQ&fetch=maybe`, /fetch must be true or false/],
  ]
  for (const [query, message] of cases) {
    const res = await media(query)
    assert.is(res.status, 400, `${query}: ${JSON.stringify(res.body)}`)
    assert.match(res.body.message, message)
  }
})

test('listed by GET /api/list and described in the OpenAPI document', async () => {
  const list = await server.request('GET', '/api/list?group=media')
  const row = list.body.operations.find((op: { path: string }) => op.path === '/api/media')
  assert.equal([row.offered, row.backend], [true, 'local'])
  const openapi = await server.request('GET', '/api/openapi.json')
  const params = openapi.body.paths['/api/media'].get.parameters.map((p: { name: string }) => p.name)
  assert.equal(params.sort(), ['fetch', 'url'])
})

test.run()
