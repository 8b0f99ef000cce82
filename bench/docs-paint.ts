/**
 * How soon /docs shows the reference, in headless Chromium (Debian's chromium): per page load, the
 * first contentful paint, and when the first operation is on screen: in the page (a `section.op`
 * here; Swagger UI's `.opblock` in the page it replaced) and painted, the later of the two. The baseline is another Plaza serving /docs, given by
 * its URL (the previous version, started from its own tree); loads alternate between the two, each
 * from a fresh browser context (nothing cached), after one warm-up load each (the page is written
 * once per process). Figures are medians.
 *
 *   npx tsx bench/docs-paint.ts [runs] [baseline-url]
 */
import puppeteer, { type Browser } from 'puppeteer-core'
import { startTestServer } from '../test/helpers/server.js'

const RUNS = Number(process.argv[2] ?? 9)
const BASELINE = process.argv[3]
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']

interface Load {
  fcp: number
  operation: number
}

/** Loads `url` in a fresh context; times are from navigation start, in ms. */
async function load(browser: Browser, url: string): Promise<Load> {
  const context = await browser.createBrowserContext()
  try {
    const page = await context.newPage()
    await page.setViewport({ width: 1280, height: 900 })
    // Watches for the first operation from the first frame on (injected by the browser, not the page; a
    // string, as tsx would wrap a named function in a helper the page does not have).
    await page.evaluateOnNewDocument(`(function look() {
      if (document.querySelector('section.op, .opblock')) window.firstOperation = performance.now()
      else requestAnimationFrame(look)
    })()`)
    await page.goto(url, { waitUntil: 'load' })
    await page.waitForFunction(() => (window as unknown as { firstOperation?: number }).firstOperation !== undefined, { timeout: 60_000 })
    const { fcp, inPage } = await page.evaluate(() => ({
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
      inPage: (window as unknown as { firstOperation: number }).firstOperation,
    }))
    return { fcp, operation: Math.max(fcp, inPage) }
  } finally {
    await context.close()
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const server = await startTestServer()
const browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium', args: FLAGS, headless: true })
try {
  const targets = [{ name: 'server-written page', url: server.url + '/docs' }, ...(BASELINE ? [{ name: 'baseline', url: BASELINE }] : [])]
  for (const target of targets) await load(browser, target.url)
  const results = new Map<string, Load[]>(targets.map((target) => [target.name, []]))
  for (let run = 0; run < RUNS; run++) for (const target of targets) results.get(target.name)!.push(await load(browser, target.url))
  for (const [name, loads] of results) {
    console.log(`${name}: first contentful paint ${Math.round(median(loads.map((l) => l.fcp)))} ms, first operation on screen ${Math.round(median(loads.map((l) => l.operation)))} ms (median of ${loads.length})`)
  }
} finally {
  await browser.close()
  await server.close()
}
