/**
 * GET /api/meme, /api/meme/templates, /api/fakepost and /api/logo on the real server, images for
 * `url=`/`avatar=` served from a loopback server (PLAZA_FETCH_ALLOW_PRIVATE=1). Every answer is
 * decoded and its pixels checked for what a reader would see.
 */
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { TEMPLATES_DIR } from '../../src/server/catalog/maker/meme/render.js'
import { LOGO_STYLE_NAMES } from '../../src/shared/schemas/logo.js'
import { MEME_TEMPLATES } from '../../src/shared/schemas/meme.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

let server: TestServer
let files: { url: string; set(name: string, body: Buffer): void; close(): Promise<void> }

async function serveFiles() {
  const bodies = new Map<string, Buffer>()
  const host = http.createServer((req, res) => {
    const body = bodies.get(req.url!)
    if (!body) return void res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': body.length }).end(body)
  })
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(host.address() as AddressInfo).port}`,
    set: (name: string, body: Buffer) => void bodies.set(`/${name}`, body),
    close: () => new Promise<void>((resolve) => { host.closeAllConnections(); host.close(() => resolve()) }),
  }
}

test.before(async () => {
  server = await startTestServer({ env: { PLAZA_FETCH_ALLOW_PRIVATE: '1' } })
  files = await serveFiles()
})
test.after(async () => {
  await server.close()
  await files.close()
})

interface Pixels {
  width: number
  height: number
  data: Buffer
  at(x: number, y: number): number[]
}

async function pixels(bytes: Buffer): Promise<Pixels> {
  const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  return { width: info.width, height: info.height, data, at: (x, y) => [...data.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4)] }
}

const get = async (route: string, headers: Record<string, string> = {}) => {
  const res = await server.request('GET', route, { headers })
  assert.is(res.status, 200, `${route}: ${res.status} ${Buffer.isBuffer(res.body) ? '' : JSON.stringify(res.body)}`)
  if (!headers.accept) assert.is(res.headers.get('content-type'), 'image/png')
  return res
}
const image = async (route: string) => pixels((await get(route)).body)
const q = encodeURIComponent

const isWhite = (p: number[]) => p[0] >= 235 && p[1] >= 235 && p[2] >= 235
const isBlack = (p: number[]) => p[0] <= 40 && p[1] <= 40 && p[2] <= 40

/** The pixels of `a` that differ from `b`'s: their count and bounding box, and how many are white or black in `a`. */
function difference(a: Pixels, b: Pixels, region = { x: 0, y: 0, width: a.width, height: a.height }) {
  let count = 0
  let white = 0
  let black = 0
  const box = { left: Infinity, top: Infinity, right: -1, bottom: -1 }
  for (let y = region.y; y < region.y + region.height; y++)
    for (let x = region.x; x < region.x + region.width; x++) {
      const p = a.at(x, y)
      const o = b.at(x, y)
      if (p.every((v, i) => Math.abs(v - o[i]) <= 2)) continue
      count++
      if (isWhite(p)) white++
      if (isBlack(p)) black++
      box.left = Math.min(box.left, x)
      box.right = Math.max(box.right, x)
      box.top = Math.min(box.top, y)
      box.bottom = Math.max(box.bottom, y)
    }
  return { count, white, black, box }
}

const meme = (template: string, top: string, bottom: string) => image(`/api/meme?template=${template}&top=${q(top)}&bottom=${q(bottom)}`)

test('the templates list: at least 8, each with its file (no <use>/<symbol>) and its size', async () => {
  const res = await get('/api/meme/templates', { accept: 'application/json' })
  assert.ok(res.body.templates.length >= 8)
  assert.match(res.body.message, /templates/)
  for (const t of res.body.templates) {
    assert.ok(t.id && t.name && t.width > 0 && t.height > 0 && t.lines === 2 && typeof t.example.top === 'string', JSON.stringify(t))
    const svg = readFileSync(path.join(TEMPLATES_DIR, `${t.id}.svg`), 'utf8')
    assert.not.match(svg, /<use|<symbol|<image|<text/, `${t.id} must be plain shapes`)
    assert.match(svg, /MIT licence/)
  }
})

test('every template renders at its size with both captions: white letters with a black edge, inside the image', async () => {
  for (const t of MEME_TEMPLATES) {
    const both = await meme(t.id, 'Top words', 'Bottom words')
    const topOnly = await meme(t.id, 'Top words', '')
    const bottomOnly = await meme(t.id, '', 'Bottom words')
    assert.equal([both.width, both.height], [t.width, t.height], t.id)
    // With both captions against one missing: what differs is exactly the missing one's caption.
    for (const [other, box] of [[bottomOnly, t.boxes[0]], [topOnly, t.boxes[1]]] as const) {
      const diff = difference(both, other)
      assert.ok(diff.white > 100 && diff.black > 100, `${t.id}: ${JSON.stringify(diff)}`)
      // Within the caption's box (the outline may spill a few pixels) and within the image.
      assert.ok(diff.box.left >= Math.max(0, box.x - 6) && diff.box.right <= Math.min(t.width - 1, box.x + box.width + 6), `${t.id} x ${JSON.stringify(diff.box)}`)
      assert.ok(diff.box.top >= Math.max(0, box.y - 6) && diff.box.bottom <= Math.min(t.height - 1, box.y + box.height + 6), `${t.id} y ${JSON.stringify(diff.box)}`)
    }
  }
})

test('captions in the top and bottom bands; a long caption shrinks and wraps but stays in its band', async () => {
  const t = MEME_TEMPLATES.find((m) => m.id === 'this-is-fine')!
  const short = await meme(t.id, 'Short', 'x')
  const long = await meme(t.id, 'A very long caption that has to wrap over several lines and shrink until it fits the band at the top '.repeat(2).slice(0, 200), 'x')
  const base = await meme(t.id, '', 'x')
  const shortDiff = difference(short, base)
  const longDiff = difference(long, base)
  const band = t.boxes[0]
  assert.ok(shortDiff.box.bottom < band.y + band.height + 6 && longDiff.box.bottom < band.y + band.height + 6, JSON.stringify(longDiff.box))
  assert.ok(longDiff.box.left >= band.x - 6 && longDiff.box.right <= band.x + band.width + 6, JSON.stringify(longDiff.box))
  // It wrapped over the band's width, where the short one sits in the middle.
  assert.ok(longDiff.box.right - longDiff.box.left > (shortDiff.box.right - shortDiff.box.left) * 2)
  assert.ok(longDiff.white > 0 && longDiff.black > 0)
  // Capitals: "short" and "SHORT" are the same picture.
  assert.equal(difference(await meme(t.id, 'SHORT', 'x'), short).count, 0)
})

test('a meme from an image URL: the picture kept, captions in its top and bottom bands', async () => {
  files.set('blue.png', await sharp({ create: { width: 500, height: 400, channels: 3, background: { r: 20, g: 60, b: 200 } } }).png().toBuffer())
  const img = await image(`/api/meme?url=${q(`${files.url}/blue.png`)}&top=${q('Hello')}&bottom=${q('World')}`)
  assert.equal([img.width, img.height], [500, 400])
  assert.equal(img.at(250, 200).slice(0, 3), [20, 60, 200])
  const bands = { top: { white: 0, black: 0 }, bottom: { white: 0, black: 0 }, middle: 0 }
  for (let y = 0; y < img.height; y++)
    for (let x = 0; x < img.width; x++) {
      const p = img.at(x, y)
      const band = y < img.height * 0.27 ? bands.top : y > img.height * 0.73 ? bands.bottom : null
      if (!band) {
        if (!(p[0] === 20 && p[1] === 60 && p[2] === 200)) bands.middle++
        continue
      }
      if (isWhite(p)) band.white++
      if (isBlack(p)) band.black++
    }
  assert.ok(bands.top.white > 200 && bands.top.black > 200 && bands.bottom.white > 200 && bands.bottom.black > 200, JSON.stringify(bands))
  assert.is(bands.middle, 0)
  // A small image is scaled up to a readable size.
  files.set('tiny.png', await sharp({ create: { width: 100, height: 50, channels: 3, background: '#888888' } }).png().toBuffer())
  const tiny = await image(`/api/meme?url=${q(`${files.url}/tiny.png`)}&top=hi`)
  assert.equal([tiny.width, tiny.height], [320, 160])
})

test('JSON answers store under uploads/<kind>/ and the stored file is the same image; asking again reuses it', async () => {
  for (const [route, kind] of [
    ['/api/meme?template=surprised&top=wow', 'meme'],
    [`/api/fakepost?username=ada&text=${q('Hello 🌍')}&time=${q('9:41 AM · Nov 23, 2026')}`, 'fakepost'],
    ['/api/logo?text=Plaza&style=badge', 'logo'],
  ]) {
    const stored = await get(route, { accept: 'application/json' })
    assert.match(stored.body.path, new RegExp(`^uploads/${kind}/[\\w-]{24}\\.png$`))
    assert.ok(stored.body.url.endsWith(`/${stored.body.path}`) && stored.body.width > 0 && stored.body.height > 0 && stored.body.message)
    const file = await server.request('GET', `/${stored.body.path}`)
    assert.is(file.status, 200)
    const bytes = (await get(route)).body
    assert.equal(difference(await pixels(file.body), await pixels(bytes)).count, 0, kind)
    const again = await get(route, { accept: 'application/json' })
    assert.is(again.body.path, stored.body.path)
  }
  // A stored file of this server is itself an image input, by its uploads/ path.
  const logo = await get('/api/logo?text=Plaza&style=badge&color=red&size=400', { accept: 'application/json' })
  const fromUpload = await image(`/api/meme?url=${q(logo.body.path)}&bottom=yes`)
  assert.equal([fromUpload.width, fromUpload.height], [logo.body.width, logo.body.height])
  assert.equal(fromUpload.at(40, 200).slice(0, 3), [255, 0, 0])
  const avatar = await fakepost(`text=hi&avatar=${q(logo.body.path)}`)
  let red = 0
  for (let y = 48; y < 152; y++) for (let x = 48; x < 152; x++) if (avatar.at(x, y).slice(0, 3).join() === '255,0,0') red++
  assert.ok(red > 2000, `red avatar pixels: ${red}`)
})

/** The post's text area of a card: where the first lines of text go. */
const TEXT_AREA = { x: 48, y: 184, width: 1104, height: 130 }
const fakepost = (query: string) => image(`/api/fakepost?username=ada&time=${q('9:41 AM · Nov 23, 2026')}&${query}`)

test('fakepost: emoji in colour where the text is; CJK drawn with real glyphs, not tofu', async () => {
  const apples = await fakepost(`text=${q('🍎🍎🍎🍎')}`)
  const letters = await fakepost(`text=${q('abcd')}`)
  const red = (img: Pixels) => {
    let n = 0
    for (let y = TEXT_AREA.y; y < TEXT_AREA.y + TEXT_AREA.height; y++)
      for (let x = TEXT_AREA.x; x < TEXT_AREA.x + 400; x++) {
        const [r, g, b] = img.at(x, y)
        if (r > 170 && g < 90 && b < 90) n++
      }
    return n
  }
  assert.ok(red(apples) > 1000, `red pixels: ${red(apples)}`)
  assert.is(red(letters), 0)

  // Two missing characters both draw the same .notdef box; two Chinese characters draw different glyphs.
  const tofuA = await fakepost(`text=${q('\u{10FFFD}')}`)
  const tofuB = await fakepost(`text=${q('\u{10FFFC}')}`)
  assert.is(difference(tofuA, tofuB, TEXT_AREA).count, 0, 'the comparison must see tofu as tofu')
  const ni = await fakepost(`text=${q('你')}`)
  const hao = await fakepost(`text=${q('好')}`)
  assert.ok(difference(ni, hao, TEXT_AREA).count > 200)
  assert.ok(difference(ni, tofuA, TEXT_AREA).count > 200)
  // And the glyph is ink: dark pixels in the text area.
  assert.ok(difference(ni, await fakepost(`text=${q(' ')}x`), TEXT_AREA).black > 50)
})

test('fakepost: the generated mark is always there; dark theme is dark; an avatar by URL is drawn in its circle', async () => {
  const light = await fakepost(`text=hello&generated=false&mark=0`)
  const dark = await fakepost('text=hello&theme=dark')
  for (const [img, background, markText] of [[light, [255, 255, 255], [0x59, 0x63, 0x6e]], [dark, [0, 0, 0], [0x9a, 0xa0, 0xa6]]] as const) {
    assert.equal(img.at(3, 3).slice(0, 3), [...background])
    // The mark's letters, in the bottom right corner.
    let ink = 0
    for (let y = img.height - 100; y < img.height - 30; y++)
      for (let x = img.width - 520; x < img.width - 48; x++) {
        const p = img.at(x, y)
        if (p.slice(0, 3).every((v, i) => Math.abs(v - markText[i]) < 12)) ink++
      }
    assert.ok(ink > 300, `mark ink ${ink}`)
  }
  let darkPixels = 0
  for (let i = 0; i < dark.data.length; i += 4) if (dark.data[i] + dark.data[i + 1] + dark.data[i + 2] < 60) darkPixels++
  assert.ok(darkPixels > (dark.width * dark.height) * 0.8)

  files.set('green.png', await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 10, g: 200, b: 40 } } }).png().toBuffer())
  const withAvatar = await fakepost(`text=hi&avatar=${q(`${files.url}/green.png`)}`)
  assert.equal(withAvatar.at(100, 100).slice(0, 3), [10, 200, 40])
  // Outside the circle (its corner) the card's background.
  assert.equal(withAvatar.at(52, 52).slice(0, 3), [255, 255, 255])
  const initials = await fakepost('text=hi&name=Ada%20Lovelace')
  assert.not.equal(initials.at(100, 70).slice(0, 3), [255, 255, 255])
})

const digestOf = (img: Pixels) => createHash('sha256').update(img.data).digest('hex')

test('logo: every style renders, each a different picture; the colour really changes the dominant colour', async () => {
  const digests = new Set<string>()
  for (const style of LOGO_STYLE_NAMES) {
    const img = await image(`/api/logo?text=${q('Plaza Maker')}&style=${style}&size=128`)
    assert.is(img.height, 128, style)
    digests.add(digestOf(img))
  }
  assert.is(digests.size, LOGO_STYLE_NAMES.length)

  const dominant = async (style: string, color: string) => {
    const img = await image(`/api/logo?text=Plaza&style=${style}&color=${q(color)}&background=white`)
    let r = 0
    let b = 0
    for (let i = 0; i < img.data.length; i += 4) {
      if (img.data[i + 3] < 200 || (img.data[i] > 230 && img.data[i + 1] > 230 && img.data[i + 2] > 230)) continue
      r += img.data[i]
      b += img.data[i + 2]
    }
    return { r, b }
  }
  for (const style of ['gradient', 'badge', 'retro', 'outline']) {
    const red = await dominant(style, '#e11d1d')
    const blue = await dominant(style, 'royalblue')
    assert.ok(red.r > red.b * 1.5 && blue.b > blue.r * 1.5, `${style}: ${JSON.stringify({ red, blue })}`)
  }
  // size is the height; a transparent background stays transparent.
  const clear = await image('/api/logo?text=Hi&style=outline&background=transparent&size=200')
  assert.is(clear.height, 200)
  assert.is(clear.at(1, 1)[3], 0)
})

test('bad input: a 400 naming the problem, and nothing is stored', async () => {
  const uploads = path.join(server.dataDir, 'uploads')
  const listing = () => (existsSync(uploads) ? readdirSync(uploads, { recursive: true }).map(String).sort() : [])
  const before = listing()
  const cases: Array<[string, number, RegExp]> = [
    ['/api/meme?template=nope&top=a', 400, /template must be one of: this-is-fine, two-buttons/],
    ['/api/meme?top=a', 400, /template \(one of: .*\) or url is required/],
    ['/api/meme?template=surprised', 400, /top or bottom is required/],
    [`/api/meme?template=surprised&top=${'a'.repeat(201)}`, 400, /top is longer than 200 characters/],
    [`/api/meme?template=surprised&url=${q(`${files.url}/blue.png`)}&top=a`, 400, /not both/],
    [`/api/meme?url=${q(`${files.url}/missing.png`)}&top=a`, 422, /answered HTTP 404/],
    ['/api/meme?url=file:///etc/passwd&top=a', 400, /url: only http and https/],
    ['/api/fakepost?text=hi', 400, /username/],
    ['/api/fakepost?username=ada', 400, /text is required/],
    ['/api/fakepost?username=a%20b&text=hi', 400, /username must be/],
    [`/api/fakepost?username=ada&text=${'x'.repeat(1001)}`, 400, /text is longer than 1000/],
    ['/api/fakepost?username=ada&text=hi&likes=-1', 400, /likes must be a whole number/],
    ['/api/fakepost?username=ada&text=hi&theme=blue', 400, /theme must be light or dark/],
    ['/api/fakepost?username=ada&text=hi&verified=maybe', 400, /verified must be true or false/],
    [`/api/fakepost?username=ada&text=hi&avatar=${q(`${files.url}/missing.png`)}`, 422, /avatar: .*404/],
    ['/api/logo?style=neon', 400, /text is required/],
    ['/api/logo?text=hi&style=sparkly', 400, /style must be one of: gradient, outline, neon, badge, monogram, stacked, retro/],
    ['/api/logo?text=hi&color=notacolour', 400, /color must be a colour/],
    ['/api/logo?text=hi&color=%23abcd', 400, /color must be a colour/],
    ['/api/logo?text=hi&color=transparent', 400, /color must be a colour/],
    ['/api/logo?text=hi&background=%2312345', 400, /background must be a colour/],
    ['/api/logo?text=hi&size=5000', 400, /size must be from 64 to 1024/],
    [`/api/logo?text=${'x'.repeat(41)}`, 400, /text is longer than 40/],
  ]
  for (const [route, status, message] of cases) {
    const res = await server.request('GET', route, { headers: { accept: 'application/json' } })
    assert.is(res.status, status, `${route}: ${JSON.stringify(res.body)}`)
    assert.match(res.body.message, message, route)
  }
  assert.equal(listing(), before)
})

test.run()
