/**
 * GET /docs: the API reference page, its files from swagger-ui-dist (a fixed list only), and the page
 * itself in headless Chromium: it renders every operation, asks nothing of any other host, and its
 * "Try it out" of GET /health gets a 200 from the server.
 */
import chromium from '@sparticuz/chromium'
import puppeteer, { type Browser } from 'puppeteer-core'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, type TestServer } from '../helpers/server.js'

let server: TestServer

test.before(async () => {
  server = await startTestServer()
})
test.after(() => server.close())

const swaggerFile = (name: string) => readFileSync(createRequire(import.meta.url).resolve(`swagger-ui-dist/${name}`))

test('the page is HTML with a self-only Content-Security-Policy and no inline script', async () => {
  const page = await server.request('GET', '/docs')
  assert.is(page.status, 200)
  assert.is(page.headers.get('content-type'), 'text/html; charset=utf-8')
  const csp = page.headers.get('content-security-policy') ?? ''
  assert.match(csp, "default-src 'self'")
  assert.not.match(csp, 'unsafe-inline')
  assert.not.match(csp, 'unsafe-eval')
  const html = page.body.toString()
  const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
  assert.ok(scripts.length >= 2)
  for (const [, attributes, body] of scripts) {
    assert.match(attributes, /src="\/docs\//)
    assert.is(body.trim(), '')
  }
  assert.not.match(html, /https?:\/\//, 'no address of another host')
  // A trailing slash is the same page.
  assert.is((await server.request('GET', '/docs/')).status, 200)
})

test("the page's files: Swagger UI's own bytes with their types, cached for long, gzipped on request", async () => {
  const css = await server.request('GET', '/docs/swagger-ui.css?v=1')
  assert.is(css.status, 200)
  assert.is(css.headers.get('content-type'), 'text/css; charset=utf-8')
  assert.is(css.headers.get('cache-control'), 'public, max-age=31536000, immutable')
  assert.ok(Buffer.compare(css.body, swaggerFile('swagger-ui.css')) === 0)

  const bundle = await fetch(server.url + '/docs/swagger-ui-bundle.js', { headers: { 'accept-encoding': 'gzip' } })
  assert.is(bundle.headers.get('content-type'), 'text/javascript; charset=utf-8')
  assert.is(bundle.headers.get('content-encoding'), 'gzip')
  // fetch decodes gzip itself: the bytes are the file's.
  assert.ok(Buffer.compare(Buffer.from(await bundle.arrayBuffer()), swaggerFile('swagger-ui-bundle.js')) === 0)

  const icon = await server.request('GET', '/docs/favicon-32x32.png', { headers: { 'accept-encoding': 'identity' } })
  assert.is(icon.headers.get('content-type'), 'image/png')
  assert.is(icon.headers.get('content-encoding'), null)
  assert.ok(Buffer.compare(icon.body, swaggerFile('favicon-32x32.png')) === 0)

  const init = await server.request('GET', '/docs/plaza-init.js')
  const script = init.body.toString()
  assert.match(script, "url: '/api/openapi.json'")
  assert.match(script, 'validatorUrl: null')
  assert.match(script, 'tryItOutEnabled: true')
})

test('nothing else of the package is reachable', async () => {
  for (const path of ['/docs/index.html', '/docs/package.json', '/docs/swagger-ui-bundle.js.map', '/docs/..%2Fpackage.json', '/docs/%2E%2E%2Fpackage.json', '/docs/swagger-ui.css/x']) {
    const answer = await server.request('GET', path)
    assert.is(answer.status, 404, path)
    assert.is(answer.body.status, 'error', path)
  }
  const post = await server.request('POST', '/docs')
  assert.is(post.status, 405)
})

test('in headless Chromium: the operations render, no request leaves the server, and "Try it out" of GET /health answers 200', async () => {
  const document = (await server.request('GET', '/api/openapi.json')).body
  const operationCount = Object.values(document.paths as Record<string, object>).reduce((n, item) => n + Object.keys(item).length, 0)
  let browser: Browser | undefined
  try {
    browser = await puppeteer.launch({ args: chromium.args, executablePath: await chromium.executablePath(), headless: true })
    const page = await browser.newPage()
    const elsewhere: string[] = []
    await page.setRequestInterception(true)
    page.on('request', (request) => {
      const url = request.url()
      // data: URLs are Swagger UI's inline icons, not requests to anyone.
      if (url.startsWith(server.url + '/') || url.startsWith('data:')) return void request.continue()
      elsewhere.push(url)
      void request.abort()
    })
    const violations: string[] = []
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text())
    })

    await page.goto(server.url + '/docs', { waitUntil: 'networkidle0' })
    await page.waitForSelector('.opblock')
    const blocks = await page.$$eval('.opblock', (elements) => elements.length)
    assert.ok(blocks >= operationCount, `${blocks} operations shown of ${operationCount}`)
    const summaries = await page.$$eval('.opblock-summary-description', (elements) => elements.map((element) => element.textContent))
    assert.ok(summaries.includes('Liveness: answers 200 while the server is serving'))

    await page.click('#operations-system-health .opblock-summary')
    await page.waitForSelector('#operations-system-health .execute')
    await page.click('#operations-system-health .execute')
    const status = await page.waitForSelector('#operations-system-health .live-responses-table tbody .response-col_status')
    assert.is((await status!.evaluate((element) => element.textContent))?.trim(), '200')
    const shown = await page.$eval('#operations-system-health .live-responses-table tbody .response-col_description', (element) => element.textContent)
    assert.match(shown ?? '', '"status": "ok"')

    assert.equal(elsewhere, [])
    assert.equal(violations, [])
  } finally {
    await browser?.close()
  }
})

test.run()
