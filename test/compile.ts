/**
 * The suite's files compiled once, before any runs: a copy of src/, test/ and scripts/ in a temporary
 * directory, each TypeScript file with its JavaScript beside it (esbuild, the transform tsx uses),
 * and every other top-level entry of the repository (node_modules, bin, dist, docs, package.json)
 * linked in. Paths inside the copy are the repository's own, so `import.meta.url`-relative files
 * (migrations, templates, fixtures, bin/run.js) are found as they are from the sources.
 *
 * Why: under tsx every module a process (or worker thread) loads passes through its resolve and load
 * hooks, about 0.8 s of CPU for a test server's 600 modules, paid again by each of the suite's 175
 * processes and every worker thread they start. Plain node loading the compiled files pays none of
 * it. The source maps are inline and name the original .ts files, so with `--enable-source-maps` a
 * failure's stack points at the sources.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { transform } from 'esbuild'

const COMPILED = ['src', 'test', 'scripts']
const TYPESCRIPT = /\.tsx?$/

export interface CompiledSuite {
  /** The copy's root: what the repository root is to the sources. */
  root: string
  /** The compiled counterpart of a file of the repository (`test/x.test.ts` → `<root>/test/x.test.js`). */
  compiled(file: string): string
  remove(): void
}

export async function compileSuite(repository: string): Promise<CompiledSuite> {
  const root = mkdtempSync(path.join(tmpdir(), 'plaza-suite-'))
  try {
    for (const entry of readdirSync(repository)) {
      if (!COMPILED.includes(entry)) symlinkSync(path.join(repository, entry), path.join(root, entry))
    }
    const transforms: Promise<void>[] = []
    for (const top of COMPILED) {
      cpSync(path.join(repository, top), path.join(root, top), { recursive: true })
      for (const name of readdirSync(path.join(repository, top), { recursive: true, encoding: 'utf8' })) {
        if (!TYPESCRIPT.test(name) || name.endsWith('.d.ts')) continue
        const source = path.join(repository, top, name)
        transforms.push(
          transform(readFileSync(source, 'utf8'), {
            loader: name.endsWith('.tsx') ? 'tsx' : 'ts',
            format: 'esm',
            target: 'node20',
            jsx: 'automatic',
            sourcemap: 'inline',
            sourcefile: source,
            tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, jsx: 'react-jsx' } },
          }).then(({ code }) => writeFileSync(path.join(root, top, name.replace(TYPESCRIPT, '.js')), code)),
        )
      }
    }
    await Promise.all(transforms)
  } catch (error) {
    rmSync(root, { recursive: true, force: true })
    throw error
  }
  return {
    root,
    compiled: (file) => path.join(root, path.relative(repository, path.resolve(repository, file)).replace(TYPESCRIPT, '.js')),
    remove: () => rmSync(root, { recursive: true, force: true }),
  }
}
