/**
 * GET /docs: the API reference, written on the server. The HTML holds every operation of the
 * OpenAPI document before any script runs; in headless Chromium with JavaScript off, the first
 * screenshot already shows them. Its script is the one file it loads; with it, "Try it" sends an
 * operation's example to this server and shows the answer, and no request leaves it.
 *
 * The browser is Debian's chromium (`apt-get install chromium`) where it is installed, else the
 * build @sparticuz/chromium ships in node_modules, so that the test runs on a fresh machine too.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import chromium from '@sparticuz/chromium'
import puppeteer, { type Browser } from 'puppeteer-core'
import sharp from 'sharp'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, type TestServer } from '../helpers/server.js'

let server: TestServer
let document: any

const DEBIAN_CHROMIUM = '/usr/bin/chromium'
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']

async function launch(): Promise<Browser> {
  if (existsSync(DEBIAN_CHROMIUM)) return puppeteer.launch({ executablePath: DEBIAN_CHROMIUM, args: FLAGS, headless: true })
  return puppeteer.launch({ executablePath: await chromium.executablePath(), args: [...chromium.args, ...FLAGS], headless: true })
}

const operations = () =>
  Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ method, path, operation })))

test.before(async () => {
  server = await startTestServer()
  document = (await server.request('GET', '/api/openapi.json')).body
})
test.after(() => server.close())

test('the HTML holds every operation of the document, with its method, path, token and answers, before any script runs', async () => {
  const page = await server.request('GET', '/docs')
  assert.is(page.status, 200)
  assert.is(page.headers.get('content-type'), 'text/html; charset=utf-8')
  const html = page.body.toString()
  const all = operations()
  assert.ok(all.length > 100, String(all.length))
  for (const { method, path, operation } of all) {
    const section = new RegExp(`<section class="op" id="${operation.operationId}" data-method="${method}" data-path="${path.replace(/[{}]/g, '\\$&')}">([\\s\\S]*?)</section>`).exec(html)
    assert.ok(section, `${method.toUpperCase()} ${path}`)
    assert.match(section![1], `${method.toUpperCase()}</span> <code class="path">${path}</code>`)
    for (const status of Object.keys(operation.responses)) assert.match(section![1], `<td>${status}</td>`, `${operation.operationId} ${status}`)
  }
  // Examples are shown as they are sent (the codeimage body that "Try it" used to fill with `"fontFamily": "string"`).
  assert.match(html, '&quot;codeSnippet&quot;: &quot;const greeting')
  assert.match(html, 'id="schema-Envelope"')
})

test('the page loads only its own script: no inline script, one style sheet allowed by its hash, a self-only Content-Security-Policy, no address elsewhere to load', async () => {
  const page = await server.request('GET', '/docs')
  const csp = page.headers.get('content-security-policy') ?? ''
  assert.match(csp, "default-src 'self'")
  assert.not.match(csp, 'unsafe-inline')
  assert.not.match(csp, 'unsafe-eval')
  const html = page.body.toString()
  const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
  assert.is(scripts.length, 1)
  assert.match(scripts[0][1], /src="\/docs\/plaza-docs\.js\?v=[\w-]+" defer/)
  assert.is(scripts[0][2].trim(), '')
  // The style sheet is in the page, so no request holds up the first paint; the policy allows it, and only it, by its hash.
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)]
  assert.is(styles.length, 1)
  assert.match(csp, `style-src 'sha256-${createHash('sha256').update(styles[0][1]).digest('base64')}'`)
  assert.not.match(html, /style="/)
  // Addresses elsewhere appear as examples' text only, never as something the page loads or links.
  assert.not.match(html, /(src|href)="(https?:)?\/\//)
  // A trailing slash is the same page.
  assert.is((await server.request('GET', '/docs/')).status, 200)
})

test('the page and its script: types, gzip on request, an ETag that revalidates to a 304; the script cached for long', async () => {
  const first = await fetch(server.url + '/docs', { headers: { 'accept-encoding': 'gzip' } })
  assert.is(first.headers.get('content-encoding'), 'gzip')
  assert.is(first.headers.get('cache-control'), 'no-cache')
  const etag = first.headers.get('etag')!
  assert.match(etag, /^"[\w-]+"$/)
  assert.match(await first.text(), '<!doctype html>')
  const again = await server.request('GET', '/docs', { headers: { 'if-none-match': etag } })
  assert.is(again.status, 304)

  const script = await server.request('GET', '/docs/plaza-docs.js?v=1')
  assert.is(script.status, 200)
  assert.is(script.headers.get('content-type'), 'text/javascript; charset=utf-8')
  assert.is(script.headers.get('cache-control'), 'public, max-age=31536000, immutable')
  assert.match(script.body.toString(), "fetch('/api/openapi.json')")
})

test('nothing else is reachable under /docs/', async () => {
  for (const path of ['/docs/index.html', '/docs/package.json', '/docs/swagger-ui-bundle.js', '/docs/plaza-docs.css', '/docs/..%2Fpackage.json', '/docs/%2E%2E%2Fpackage.json', '/docs/plaza-docs.js/x']) {
    const answer = await server.request('GET', path)
    assert.is(answer.status, 404, path)
    assert.is(answer.body.status, 'error', path)
  }
  assert.is((await server.request('POST', '/docs')).status, 405)
})

test('in headless Chromium with JavaScript off, the first screenshot already shows the reference: every operation is laid out', async () => {
  let browser: Browser | undefined
  try {
    browser = await launch()
    const page = await browser.newPage()
    await page.setJavaScriptEnabled(false)
    await page.setViewport({ width: 1280, height: 900 })
    await page.goto(server.url + '/docs', { waitUntil: 'load' })
    const shot = await page.screenshot({ type: 'png' })
    // Text, not a blank page or a spinner: many distinct rows of pixels in the first screen.
    const { data, info } = await sharp(shot).greyscale().raw().toBuffer({ resolveWithObject: true })
    let rowsWithInk = 0
    for (let y = 0; y < info.height; y++) {
      const row = data.subarray(y * info.width, (y + 1) * info.width)
      if (row.some((value) => value < 128)) rowsWithInk++
    }
    assert.ok(rowsWithInk > info.height / 4, `${rowsWithInk} of ${info.height} rows have text`)
    const laidOut = await page.$$eval('section.op', (sections) => sections.filter((section) => (section as HTMLElement).offsetHeight > 0).length)
    assert.is(laidOut, operations().length)
    const heading = await page.$eval('#authLogin .op-head', (element) => element.textContent)
    assert.match(heading ?? '', 'POST /api/mobile/auth/login')
    // Chromium painted content on the first paint (the old page painted a spinner, then built itself).
    const paints = await page.evaluate(() => performance.getEntriesByType('paint').map((entry) => entry.name))
    assert.ok(paints.includes('first-contentful-paint'), paints.join(', '))
    assert.is(await page.$('button.try'), null, 'no "Try it" without the script')
  } finally {
    await browser?.close()
  }
})

test('with the script, "Try it" sends the example and shows the answer (GET /health; the code image of POST /api/codeimage), and no request leaves the server', async () => {
  let browser: Browser | undefined
  try {
    browser = await launch()
    const page = await browser.newPage()
    const elsewhere: string[] = []
    await page.setRequestInterception(true)
    page.on('request', (request) => {
      const url = request.url()
      if (url.startsWith(server.url + '/') || url.startsWith('data:') || url.startsWith('blob:')) return void request.continue()
      elsewhere.push(url)
      void request.abort()
    })
    const violations: string[] = []
    page.on('console', (message) => {
      if (/Content Security Policy|error/i.test(message.text())) violations.push(message.text())
    })
    page.on('pageerror', (error) => violations.push(String(error)))
    await page.goto(server.url + '/docs', { waitUntil: 'networkidle0' })
    // A click in the page (sections off screen are laid out when they come into view, so a click by coordinates could land beside).
    const press = (selector: string) => page.$eval(selector, (element) => (element as HTMLElement).click())

    await press('#health button.try')
    await page.waitForSelector('#health form.try-form')
    await press('#health form.try-form button[type=submit]')
    await page.waitForSelector('#health .try-out pre')
    await page.waitForFunction(() => /"status": "ok"/.test(document.querySelector('#health .try-out pre')?.textContent ?? ''))
    assert.match((await page.$eval('#health .status', (element) => element.textContent)) ?? '', '→ 200')

    await press('#codeimage button.try')
    await page.waitForSelector('#codeimage form.try-form textarea')
    const body = JSON.parse(await page.$eval('#codeimage form.try-form textarea', (element) => (element as HTMLTextAreaElement).value))
    assert.ok(body.codeSnippet)
    await press('#codeimage form.try-form button[type=submit]')
    const image = await page.waitForSelector('#codeimage .try-out img')
    await page.waitForFunction(() => (document.querySelector('#codeimage .try-out img') as HTMLImageElement | null)?.naturalWidth)
    assert.ok((await image!.evaluate((element) => (element as HTMLImageElement).naturalWidth)) > 100)
    assert.match((await page.$eval('#codeimage .status', (element) => element.textContent)) ?? '', '→ 200')

    assert.equal(elsewhere, [])
    assert.equal(violations, [])
  } finally {
    await browser?.close()
  }
})

test.run()
