/**
 * Code images against a warm browser: Plaza's render of a 40-line TypeScript snippet (candy, dark,
 * PNG at 2x, background and window shadow on) beside headless Chromium screenshotting the same
 * snippet laid out as HTML in ray.so's look, both warm, interleaved in one run (Plaza, browser,
 * Plaza, browser, ...). Every run changes one line of the snippet, so neither side can answer
 * from a cache of an earlier image.
 *
 *   npx tsx bench/codeimage.ts [runs] [--save DIR]   (default 30 runs of each)
 *
 * `--save DIR` writes the last run's images (plaza.png, chromium.png, chromium-fast.png) to look at side by side.
 * `--baseline CHECKOUT` adds, interleaved with the rest, the same request rendered by the code-image
 * service of another checkout of Plaza (its src/ and a node_modules beside it: `git archive COMMIT
 * src | tar -x -C DIR`, then link node_modules), to compare a change against what it replaces.
 *
 * Plaza: the code-image service as `POST /api/codeimage` runs it (service.ts: validation, then the
 * worker pool, the render in a worker thread, the PNG transferred back), with the server's worker
 * count and after `warm()`, as a server is after start-up. Not measured: reading the JSON body
 * and writing the answer, the same for both sides.
 *
 * Browser: Debian's chromium (`apt-get install -y chromium`), launched once through puppeteer-core
 * with a fresh profile and the flags below; one page, loaded once with the frame's CSS and
 * JetBrains Mono (the font is in the page from the start, so no run loads it). A run highlights the
 * snippet with shiki into HTML (ray.so does this in its page; here in this process, with a warm
 * highlighter and the same css-variables theme and palette as Plaza), puts it in the page, and
 * takes a PNG screenshot of the frame element at device scale factor 2. The window's shadow is
 * ray.so's own CSS (six stacked box-shadows, blurs up to 80 px); Plaza draws its gradient
 * approximation of it. A fourth series, interleaved too, takes the same screenshot with Chromium's
 * `optimizeForSpeed` (a faster PNG encoding that makes larger files): the fastest the browser offers.
 *
 * Besides the wall-clock times, the CPU time each image costs: Plaza's from this process's usage
 * (the render worker and libvips's threads included), the browser's from its processes' threads
 * (/proc) plus this process's share. On a shared machine the wall-clock figures carry the
 * waiting for a core; the CPU figures much less so.
 *
 * Chromium is optional: without it the browser half is skipped with a message. It is never a
 * dependency of the package (puppeteer-core is a devDependency and downloads no browser).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import puppeteer, { type Browser, type ElementHandle, type Page } from 'puppeteer-core'
import { createHighlighter } from 'shiki'
import { createCodeImageService } from '../src/server/codeimage/service.js'
import { rayTheme } from '../src/server/codeimage/highlight.js'
import { THEMES } from '../src/server/codeimage/themes.js'
import { LINE_HEIGHT, WINDOW } from '../src/server/codeimage/scene.js'
import { median, quantile } from './lib/timing.js'

const argv = process.argv.slice(2)
const option = (name: string) => {
  const at = argv.indexOf(name)
  return at < 0 ? undefined : (argv.splice(at, 2)[1] ?? '')
}
const SAVE = option('--save')
const BASELINE = option('--baseline')
const RUNS = Number(argv[0] ?? 30)
if (!Number.isInteger(RUNS) || RUNS < 1 || SAVE === '' || BASELINE === '') {
  console.error('usage: npx tsx bench/codeimage.ts [runs] [--save DIR] [--baseline CHECKOUT]')
  process.exit(2)
}
const require = createRequire(import.meta.url)

const SNIPPET = Array.from({ length: 40 }, (_, i) =>
  [
    `export async function load${i}(id: string): Promise<Item | null> {`,
    `  const response = await fetch(\`https://api.example.com/items/\${id}?v=${i}\`)`,
    `  if (!response.ok) throw new Error('failed: ' + response.status)`,
    `  const body = (await response.json()) as { item?: Item }`,
    `  // cache for ${i} seconds, then ask again`,
    `  cache.set(id, { value: body.item ?? null, until: Date.now() + ${i * 1000} })`,
    `  return body.item ?? null`,
    `}`,
  ][i % 8],
).join('\n')

/** Run `i`'s snippet: the same 40 lines and a 41st that no other run has. */
const snippet = (i: number) => `${SNIPPET}\n// run ${i}`

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']
const PADDING = 64
const FONT_SIZE = 15
const SCALE = 2

function findChromium(): string | null {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || null
    } catch {
      // not this one
    }
  }
  return null
}

/** CPU time of this process (every thread: the render worker and libvips's too), in ms. */
function ownCpuMs(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/**
 * CPU time of a process tree (the browser and its renderer, GPU and utility processes), in ms: the
 * sum of every thread's time on a CPU from /proc/PID/task/TID/schedstat (nanoseconds). A thread
 * that ends between two readings takes its time with it, so this errs on the browser's side.
 */
function treeCpuMs(root: number): number {
  const parents = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {
      // gone meanwhile
    }
  }
  const tree = new Set([root])
  for (let grew = true; grew; ) {
    grew = false
    for (const [pid, parent] of parents) if (tree.has(parent) && !tree.has(pid)) grew = tree.add(pid) !== null
  }
  let ns = 0
  for (const pid of tree) {
    let tasks: string[] = []
    try {
      tasks = readdirSync(`/proc/${pid}/task`)
    } catch {
      continue
    }
    for (const tid of tasks) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      } catch {
        // ended meanwhile
      }
    }
  }
  return ns / 1e6
}

/** The frame in ray.so's look with Plaza's sizes: gradient, padding, the translucent window, its bar, controls and title. */
function template(windowWidth: number): string {
  const font = readFileSync(require.resolve('@expo-google-fonts/jetbrains-mono/400Regular/JetBrainsMono_400Regular.ttf')).toString('base64')
  const theme = THEMES.candy
  const palette = Object.entries(theme.dark)
    .map(([role, color]) => `--ray-${role === 'foreground' ? 'foreground' : 'token-' + role.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}: ${color};`)
    .join(' ')
  return `<!doctype html><html><head><style>
    @font-face { font-family: "JetBrains Mono"; src: url(data:font/ttf;base64,${font}) format("truetype"); }
    html, body { margin: 0; background: transparent; }
    #frame { display: inline-block; padding: ${PADDING}px; background: linear-gradient(140deg, ${theme.from}, ${theme.to}); ${palette} }
    .window { position: relative; box-sizing: border-box; width: ${windowWidth}px; border-radius: ${WINDOW.radius}px; background: rgba(0, 0, 0, 0.75);
      padding: ${WINDOW.header}px ${WINDOW.insetX}px ${WINDOW.bottom}px;
      box-shadow: 0 0 0 1px rgba(255, 255, 255, 0.15), 0 0 0 1.5px rgba(0, 0, 0, 0.2),
        0 2.8px 2.2px rgba(0, 0, 0, 0.034), 0 6.7px 5.3px rgba(0, 0, 0, 0.048), 0 12.5px 10px rgba(0, 0, 0, 0.06),
        0 22.3px 17.9px rgba(0, 0, 0, 0.072), 0 41.8px 33.4px rgba(0, 0, 0, 0.086), 0 100px 80px rgba(0, 0, 0, 0.12); }
    .controls { position: absolute; top: ${WINDOW.header / 2 - 6}px; left: 16px; display: flex; gap: 8px; }
    .controls i { width: 12px; height: 12px; border-radius: 6px; }
    .title { position: absolute; top: 0; left: 0; right: 0; height: ${WINDOW.header}px; text-align: center;
      font: ${WINDOW.titleSize}px/${WINDOW.header}px "JetBrains Mono"; color: rgba(255, 255, 255, 0.6); }
    pre { margin: 0; background: transparent !important; font: ${FONT_SIZE}px/${FONT_SIZE * LINE_HEIGHT}px "JetBrains Mono"; color: var(--ray-foreground); font-variant-ligatures: contextual; }
  </style></head><body><div id="frame"><div class="window">
    <div class="controls">${WINDOW.controls.map((c) => `<i style="background: ${c}"></i>`).join('')}</div>
    <div class="title">load.ts</div><div id="code"></div>
  </div></div></body></html>`
}

interface BrowserSide {
  pid: number
  /** `fast`: Chromium's optimizeForSpeed encoding (larger PNGs, less time). */
  shot(code: string, fast?: boolean): Promise<{ png: Uint8Array; width: number; height: number }>
  close(): Promise<void>
  command: string
}

async function startBrowser(binary: string, cssWidth: number, cssHeight: number): Promise<BrowserSide> {
  const profile = mkdtempSync(path.join(tmpdir(), 'plaza-bench-chromium-'))
  const highlighter = await createHighlighter({ themes: [rayTheme()], langs: ['typescript'] })
  const args = [...FLAGS, `--user-data-dir=${profile}`, '--hide-scrollbars', '--remote-debugging-pipe']
  // Exactly these flags: puppeteer's own defaults are left out, so the command line is the one printed.
  const browser: Browser = await puppeteer.launch({ executablePath: binary, ignoreDefaultArgs: true, args, pipe: true, headless: true })
  const page: Page = await browser.newPage()
  await page.setViewport({ width: cssWidth, height: cssHeight, deviceScaleFactor: SCALE })
  await page.setContent(template(cssWidth - 2 * PADDING), { waitUntil: 'load' })
  await page.evaluate(() => document.fonts.ready.then(() => undefined))
  const frame = (await page.$('#frame')) as ElementHandle<HTMLElement>
  return {
    pid: browser.process()!.pid!,
    command: [binary, ...args].join(' '),
    async shot(code, fast = false) {
      const html = highlighter.codeToHtml(code, { lang: 'typescript', theme: 'plaza-ray' })
      await page.evaluate((markup) => {
        document.getElementById('code')!.innerHTML = markup
      }, html)
      const png = await frame.screenshot({ type: 'png', optimizeForSpeed: fast })
      // Width and height from the PNG's IHDR.
      return { png, width: Buffer.from(png).readUInt32BE(16), height: Buffer.from(png).readUInt32BE(20) }
    },
    async close() {
      await browser.close()
      highlighter.dispose()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

const summary = (times: number[]) => ({ median: median(times), p90: quantile(times, 0.9), min: Math.min(...times) })
const ms = (n: number) => n.toFixed(1).padStart(7)
const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  } catch {
    return 'unknown'
  }
})()

const service = createCodeImageService({ env: process.env })
const baseline: typeof service | null = BASELINE
  ? ((await import(pathToFileURL(path.resolve(BASELINE, 'src/server/codeimage/service.ts')).href)) as { createCodeImageService: typeof createCodeImageService }).createCodeImageService({ env: process.env })
  : null
const request = (i: number) => ({ codeSnippet: snippet(i), language: 'typescript', title: 'load.ts', theme: 'candy' })
let browserSide: BrowserSide | null = null
try {
  const startedWarm = performance.now()
  await service.warm()
  const warmMs = performance.now() - startedWarm
  await baseline?.warm()
  await baseline?.render(request(-1))
  const startedFirst = performance.now()
  const first = await service.render(request(-1))
  const firstMs = performance.now() - startedFirst

  const binary = findChromium()
  if (binary) {
    browserSide = await startBrowser(binary, first.width / SCALE, first.height / SCALE)
    await browserSide.shot(snippet(-1))
  }

  const plaza: number[] = []
  const resized: number[] = []
  const browser: number[] = []
  const plazaCpu: number[] = []
  const resizedCpu: number[] = []
  const before: number[] = []
  const beforeCpu: number[] = []
  const fastShots: number[] = []
  const fastCpu: number[] = []
  const browserCpu: number[] = []
  let plazaBytes = 0
  let image = first
  let shot: { png: Uint8Array; width: number; height: number } = { png: new Uint8Array(), width: 0, height: 0 }
  let fastShot = shot
  for (let i = 0; i < RUNS; i++) {
    let cpu = ownCpuMs()
    let started = performance.now()
    image = await service.render(request(i))
    plaza.push(performance.now() - started)
    plazaCpu.push(ownCpuMs() - cpu)
    plazaBytes += image.data.length
    if (browserSide) {
      const chromiumCpu = treeCpuMs(browserSide.pid)
      cpu = ownCpuMs()
      started = performance.now()
      shot = await browserSide.shot(snippet(i))
      browser.push(performance.now() - started)
      // This process's part (shiki's HTML, puppeteer) and the browser's processes.
      browserCpu.push(ownCpuMs() - cpu + treeCpuMs(browserSide.pid) - chromiumCpu)
    }
    cpu = ownCpuMs()
    started = performance.now()
    await service.render({ ...request(i), padding: 65 + i })
    resized.push(performance.now() - started)
    resizedCpu.push(ownCpuMs() - cpu)
    if (browserSide) {
      const chromiumCpu = treeCpuMs(browserSide.pid)
      cpu = ownCpuMs()
      started = performance.now()
      fastShot = await browserSide.shot(`${snippet(i)} (fast)`, true)
      fastShots.push(performance.now() - started)
      fastCpu.push(ownCpuMs() - cpu + treeCpuMs(browserSide.pid) - chromiumCpu)
    }
    if (baseline) {
      cpu = ownCpuMs()
      started = performance.now()
      await baseline.render(request(i))
      before.push(performance.now() - started)
      beforeCpu.push(ownCpuMs() - cpu)
    }
  }

  const p = summary(plaza)
  console.log(`${new Date().toISOString()}, commit ${commit}, Node ${process.version}, ${availableParallelism()} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`)
  console.log(`snippet: 41 lines of TypeScript (one differs each run), candy, dark, 2x, shadow; ${RUNS} runs of each, interleaved`)
  console.log(`plaza:    median ${ms(p.median)} ms   p90 ${ms(p.p90)} ms   min ${ms(p.min)} ms   PNG ${first.width}x${first.height}, ${Math.round(plazaBytes / RUNS / 1024)} KB`)
  console.log(`          CPU per image: median ${ms(median(plazaCpu))} ms (this process, every thread)`)
  console.log(`          (service.render through the worker pool; warm() ${warmMs.toFixed(0)} ms, first render of this snippet ${firstMs.toFixed(0)} ms)`)
  const w = summary(resized)
  console.log(`plaza, a new size each run: median ${ms(w.median)} ms   p90 ${ms(w.p90)} ms   min ${ms(w.min)} ms`)
  console.log(`          CPU per image: median ${ms(median(resizedCpu))} ms`)
  console.log('          (padding 65, 66, ... instead of 64: 2 px larger each run, so no backdrop of an earlier run fits and everything is painted)')
  if (baseline) {
    const o = summary(before)
    console.log(`baseline: median ${ms(o.median)} ms   p90 ${ms(o.p90)} ms   min ${ms(o.min)} ms   (${BASELINE}: the same requests)`)
    console.log(`          CPU per image: median ${ms(median(beforeCpu))} ms`)
    console.log(`plaza is ${(o.median / p.median).toFixed(1)}x faster than the baseline at the median, ${(o.p90 / p.p90).toFixed(1)}x at p90`)
  }
  if (!browserSide) {
    console.log('browser:  skipped: no chromium on this machine (Debian: apt-get install -y chromium)')
  } else {
    const b = summary(browser)
    console.log(`browser:  median ${ms(b.median)} ms   p90 ${ms(b.p90)} ms   min ${ms(b.min)} ms   PNG ${shot.width}x${shot.height}, ${Math.round(shot.png.length / 1024)} KB`)
    console.log(`          CPU per image: median ${ms(median(browserCpu))} ms (the browser's processes, and this one's highlighting and puppeteer)`)
    console.log(`          (${execFileSync(binary!, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()}, warm, one page: ${browserSide.command})`)
    console.log(`plaza is ${(b.median / p.median).toFixed(1)}x faster at the median, ${(b.p90 / p.p90).toFixed(1)}x at p90`)
    console.log(`CPU per image: plaza uses ${(median(browserCpu) / median(plazaCpu)).toFixed(1)}x less at the median`)
    const f = summary(fastShots)
    console.log(`browser, optimizeForSpeed: median ${ms(f.median)} ms   p90 ${ms(f.p90)} ms   min ${ms(f.min)} ms   PNG ${fastShot.width}x${fastShot.height}, ${Math.round(fastShot.png.length / 1024)} KB`)
    console.log(`          CPU per image: median ${ms(median(fastCpu))} ms (the same page, Chromium's fast PNG encoding: larger files)`)
    console.log(`plaza is ${(f.median / p.median).toFixed(1)}x faster at the median, ${(f.p90 / p.p90).toFixed(1)}x at p90; uses ${(median(fastCpu) / median(plazaCpu)).toFixed(1)}x less CPU`)
  }
  if (SAVE) {
    mkdirSync(SAVE, { recursive: true })
    writeFileSync(path.join(SAVE, 'plaza.png'), image.data)
    if (browserSide) writeFileSync(path.join(SAVE, 'chromium.png'), shot.png)
    if (browserSide) writeFileSync(path.join(SAVE, 'chromium-fast.png'), fastShot.png)
    console.log(`the last run's images: ${SAVE}/plaza.png${browserSide ? `, ${SAVE}/chromium.png, ${SAVE}/chromium-fast.png` : ''}`)
  }
} finally {
  await browserSide?.close()
  await service.close()
  await baseline?.close()
}
