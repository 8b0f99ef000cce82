/**
 * Media benchmark: the median time of `GET /api/media`'s two paths as the server runs them,
 * beside a baseline measured in the same run.
 * - pattern-only: `describeMedia(url, {fetch: false})` over a fixed list of known URLs, against
 *   `new URL()` of the same URLs (the least any answer costs);
 * - fetched page: `describeMedia` of a loopback page (a realistic 60 KiB head, OpenGraph, Twitter,
 *   then a 300 KiB body), without and with its oEmbed link, against a raw undici GET reading the
 *   whole page (keep-alive), and the fetch guard's own whole-page fetch for reference;
 * - the worst page, a head that never ends (512 KiB parsed), and one 64 KiB slice of parsing alone.
 *
 *   npx tsx bench/media.ts [runs]
 */
import { request } from 'undici'
import { describeMedia } from '../src/server/catalog/media/describe.js'
import { PageParser } from '../src/server/catalog/media/page.js'
import { guardedFetch } from '../src/server/fetch-guard.js'
import { startSite, videoPage } from '../test/media/site.js'
import { medianMs } from './lib/timing.js'

const RUNS = Number(process.argv[2] ?? 200)


const time = (runs: number, work: () => unknown) => medianMs(work, runs, Math.min(20, runs))

const URLS = [
  'https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1m30s',
  'https://vimeo.com/channels/staffpicks/76979871',
  'https://www.tiktok.com/@scout2015/video/6718335390845095173',
  'https://x.com/NASA/status/1798756112954749358',
  'https://open.spotify.com/intl-de/album/4aawyAB9vmqN3uQ7FjRGTy',
  'https://www.reddit.com/r/aww/comments/90bu6w/heat_index/',
  'https://www.dailymotion.com/video/x8abc12',
  'https://example.com/some/article',
]

const site = await startSite()
// A head the size of a big site's (scripts and style inline), then a long body that is never needed.
const filler = `<script>${'var a=1;'.repeat(7_500)}</script>`
const page = (oembed: boolean) => videoPage(oembed ? '/oembed' : '').replace('</head>', `${filler}</head>`).replace('</body>', `${'<p>text</p>'.repeat(30_000)}</body>`)
site.html('/plain', page(false).replace(/<link rel="alternate" type="application\/json\+oembed"[^>]*>/, ''))
site.html('/with-oembed', page(true))
site.route('/oembed', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'video', title: 'T', html: '<iframe src="https://tube.example/e/1"></iframe>' })))
const options = { fetch: true, allowPrivate: true, timeoutMs: 8000 }

try {
  const urlBaseline = await time(RUNS, () => URLS.map((url) => new URL(url)))
  const patternOnly = await time(RUNS, () => Promise.all(URLS.map((url) => describeMedia(url, { ...options, fetch: false }))))
  const rawGet = await time(RUNS, async () => {
    const response = await request(`${site.url}/plain`)
    for await (const _chunk of response.body);
  })
  const guarded = await time(RUNS, () => guardedFetch(`${site.url}/plain`, { allowPrivate: true }))
  const fetched = await time(RUNS, () => describeMedia(`${site.url}/plain`, options))
  const withOEmbed = await time(RUNS, () => describeMedia(`${site.url}/with-oembed`, options))
  // The worst page: a head that never ends, parsed up to the 512 KiB bound. Parsing runs on the event
  // loop a 64 KiB slice at a time (page.ts yields between slices): the slice's time is the longest a
  // request's parsing holds the loop. (The loopback site writes from this process too, so a loop-delay
  // monitor here would time its writes as well; the parser is timed alone instead.)
  const endless = await time(Math.min(RUNS, 30), () => describeMedia(`${site.url}/endless`, options))
  const slice = `<meta name="filler" content="${'x'.repeat(1000)}">\n`.repeat(64)
  const parseSlice = await time(RUNS, () => new PageParser().write(slice))
  const size = Buffer.byteLength(page(false)) / 1024
  console.log(`runs: ${RUNS} (medians)`)
  console.log(`pattern-only, ${URLS.length} URLs: ${(patternOnly * 1000).toFixed(1)} µs (${((patternOnly * 1000) / URLS.length).toFixed(1)} µs each); baseline new URL() of the same: ${(urlBaseline * 1000).toFixed(1)} µs (x${(patternOnly / urlBaseline).toFixed(1)})`)
  console.log(`fetched page (${size.toFixed(0)} KiB, head ${(Buffer.byteLength(filler) / 1024).toFixed(0)} KiB): ${fetched.toFixed(2)} ms; baseline raw undici GET of the whole page: ${rawGet.toFixed(2)} ms (x${(fetched / rawGet).toFixed(2)})`)
  console.log(`  (the fetch guard alone, whole page, a fresh pinned connection per request: ${guarded.toFixed(2)} ms)`)
  console.log(`fetched page + oEmbed: ${withOEmbed.toFixed(2)} ms (x${(withOEmbed / rawGet).toFixed(2)} the raw GET)`)
  console.log(`endless head (512 KiB parsed, then cut): ${endless.toFixed(2)} ms; parsing one 64 KiB slice: ${parseSlice.toFixed(2)} ms (the longest the parser holds the event loop)`)
} finally {
  await site.close()
}
