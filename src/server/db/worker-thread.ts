import { Worker } from 'node:worker_threads'

/**
 * Starts one of this folder's worker modules (`name` without its extension) with `workerData`. From
 * the TypeScript sources (tests, tsx) the worker registers tsx first; from dist/ it runs the .js.
 */
export function startDbWorker(name: string, workerData: unknown): Worker {
  const here = new URL(import.meta.url)
  if (here.pathname.endsWith('.ts')) {
    const target = new URL(`./${name}.ts`, here).href
    return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(target)}) })`, { eval: true, workerData })
  }
  return new Worker(new URL(`./${name}.js`, here), { workerData })
}
