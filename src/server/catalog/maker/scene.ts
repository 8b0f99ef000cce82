/** Every Maker job, and the SVG document each becomes (the worker rasterises it; the bench and tests call it directly). */
import { fakepostScene, type FakepostJob } from './fakepost/render.js'
import { logoScene, type LogoJob } from './logo/render.js'
import { memeScene, type MemeJob } from './meme/render.js'

/** A plain SVG of a given size: the benchmark's baseline. */
export interface SvgJob {
  kind: 'svg'
  svg: string
}

export type CardJob = MemeJob | FakepostJob | LogoJob | SvgJob

/** The job's SVG document. */
export async function renderCard(job: CardJob): Promise<string> {
  switch (job.kind) {
    case 'meme':
      return (await memeScene(job)).svg
    case 'fakepost':
      return (await fakepostScene(job)).svg
    case 'logo':
      return logoScene(job).svg
    case 'svg':
      return job.svg
  }
}
