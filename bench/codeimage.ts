/**
 * Code-image benchmark: the median time to render a 40-line snippet (PNG, 2x, background on)
 * with Plaza's renderer, beside the median time headless Chromium takes to screenshot the same
 * snippet as an HTML page (the way ray.so and carbon render), measured in the same run.
 *
 *   npx tsx bench/codeimage.ts [runs]
 *
 * Chromium is optional (Debian: `apt-get install chromium`); without it the browser part is
 * skipped with a message. It is never a dependency of the package.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { codeToHtml } from 'shiki'
import { codeImageInput } from '../src/shared/schemas/codeimage.js'
import { Renderer } from '../src/server/codeimage/renderer.js'
import { toRenderJob } from '../src/server/codeimage/validate.js'

const RUNS = Number(process.argv[2] ?? 15)

const SNIPPET = Array.from({ length: 40 }, (_, i) => {
  const n = i % 8
  return [
    `export async function load${i}(id: string): Promise<Item | null> {`,
    `  const response = await fetch(\`https://api.example.com/items/\${id}?v=${i}\`)`,
    `  if (!response.ok) throw new Error('failed: ' + response.status)`,
    `  const body = (await response.json()) as { item?: Item }`,
    `  // cache for ${i} seconds, then ask again`,
    `  cache.set(id, { value: body.item ?? null, until: Date.now() + ${i * 1000} })`,
    `  return body.item ?? null`,
    `}`,
  ][n]
}).join('\n')

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

async function timePlaza() {
  const renderer = await Renderer.create()
  const job = toRenderJob(codeImageInput.parse({ codeSnippet: SNIPPET, language: 'typescript', title: 'load.ts', theme: 'candy' }))
  const first = performance.now()
  const warm = await renderer.render(job)
  const firstMs = performance.now() - first
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    // A different snippet each time (one changed line), so no cache of a previous answer is measured.
    const started = performance.now()
    await renderer.render({ ...job, code: SNIPPET + `\n// run ${i}` })
    times.push(performance.now() - started)
  }
  return { median: median(times), firstMs, width: warm.width, height: warm.height }
}

function findChromium(): string | null {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' })
    if (found.status === 0 && found.stdout.trim()) return found.stdout.trim()
  }
  return null
}

/** The same snippet as a ray.so-like page: shiki's HTML in JetBrains Mono on a gradient, 2x. */
async function page(width: number, height: number) {
  const code = await codeToHtml(SNIPPET, { lang: 'typescript', theme: 'github-dark' })
  return `<!doctype html><html><head><style>
    html, body { margin: 0; width: ${width / 2}px; height: ${height / 2}px; }
    body { background: linear-gradient(140deg, #A58EFB, #E9BFF8); display: flex; align-items: center; justify-content: center; }
    .window { background: rgba(0,0,0,.75); border-radius: 12px; box-shadow: 0 20px 68px rgba(0,0,0,.55); padding: 48px 16px 20px; }
    pre { margin: 0; background: transparent !important; font: 15px/22.5px "JetBrains Mono", monospace; }
  </style></head><body><div class="window"><div>load.ts</div>${code}</div></body></html>`
}

function timeChromium(binary: string, width: number, height: number, html: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'plaza-bench-'))
  const file = path.join(dir, 'snippet.html')
  writeFileSync(file, html)
  const times: number[] = []
  try {
    for (let i = 0; i < Math.min(RUNS, 7); i++) {
      const shot = path.join(dir, `shot${i}.png`)
      const profile = mkdtempSync(path.join(dir, 'profile-'))
      const started = performance.now()
      execFileSync(binary, [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--no-first-run', '--hide-scrollbars', `--user-data-dir=${profile}`, '--force-device-scale-factor=2',
        `--window-size=${width / 2},${height / 2}`, `--screenshot=${shot}`, `file://${file}`,
      ], { stdio: 'ignore', timeout: 60_000 })
      times.push(performance.now() - started)
      if (!statSync(shot).size) throw new Error('chromium wrote an empty screenshot')
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return median(times)
}

const plaza = await timePlaza()
console.log(`snippet: 40 lines of TypeScript, PNG ${plaza.width}x${plaza.height} (2x), ${RUNS} runs`)
console.log(`plaza renderer:     median ${plaza.median.toFixed(1)} ms (first render after start-up ${plaza.firstMs.toFixed(0)} ms)`)
const chromium = findChromium()
if (!chromium) {
  console.log('headless browser:   skipped: no chromium on this machine (Debian: apt-get install chromium)')
} else {
  const browser = timeChromium(chromium, plaza.width, plaza.height, await page(plaza.width, plaza.height))
  console.log(`headless chromium:  median ${browser.toFixed(1)} ms (${chromium}, fresh profile per shot)`)
  console.log(`plaza is ${(browser / plaza.median).toFixed(1)}x faster`)
}
