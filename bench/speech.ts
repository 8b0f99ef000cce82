/**
 * Speech benchmark: the median time of `GET /api/tts/flite` and `/api/tts/espeak` for one fixed
 * sentence, as WAV and as MP3, over HTTP on a real server (worker pool, validation, encoding),
 * beside a baseline measured in the same run: the raw engine call in this thread, with no HTTP,
 * no worker and no encoding. The ratio is what the server adds; MP3's extra is lamejs.
 *
 *   npx tsx bench/speech.ts [runs]
 */
import { rmSync } from 'node:fs'
import { synthesizeEspeak, synthesizeFlite } from '../src/server/catalog/audio/engines.js'
import { ESPEAK_PACKAGE } from '../src/shared/schemas/speech.js'
import { startTestServer } from '../test/helpers/server.js'
import { medianMs } from './lib/timing.js'

const RUNS = Number(process.argv[2] ?? 9)
const SENTENCE = 'The quick brown fox jumps over the lazy dog, while five wizards box quickly in the warm summer night.'


const time = (run: () => unknown) => medianMs(run, RUNS)

const server = await startTestServer()
try {
  const rows: string[][] = []
  const engines = [
    { engine: 'flite', voice: 'slt', raw: () => synthesizeFlite(SENTENCE, 'slt') },
    { engine: 'espeak', voice: 'en-us', raw: () => synthesizeEspeak({ kind: 'espeak', text: SENTENCE, voice: 'gmw/en-US', speed: 175, pitch: 50, module: ESPEAK_PACKAGE }) },
  ]
  for (const { engine, voice, raw } of engines) {
    const baseline = await time(raw)
    rows.push([`${engine} engine call (baseline)`, baseline.toFixed(1), '1.00'])
    for (const format of ['wav', 'mp3']) {
      const query = new URLSearchParams({ text: SENTENCE, voice, format })
      const ms = await time(async () => {
        const res = await fetch(`${server.url}/api/tts/${engine}?${query}`)
        if (res.status !== 200) throw new Error(`${engine} ${format}: HTTP ${res.status}`)
        await res.arrayBuffer()
      })
      rows.push([`GET /api/tts/${engine} ${format}`, ms.toFixed(1), (ms / baseline).toFixed(2)])
    }
  }
  console.log(`median of ${RUNS} runs, "${SENTENCE.slice(0, 40)}..." (${SENTENCE.length} characters)`)
  console.log(['what', 'ms', 'x baseline'].join('\t'))
  for (const row of rows) console.log(row.join('\t'))
} finally {
  await server.close()
  rmSync(server.dataDir, { recursive: true, force: true })
}
