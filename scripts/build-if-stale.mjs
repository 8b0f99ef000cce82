/**
 * `npm test`'s first step: runs `npm run build` unless dist/ is already built from the sources as
 * they are (every file under src/ and the package and compiler settings older than the last file
 * the build writes, dist/bundle/inputs.json). A fresh clone's `npm ci` has just built it; a change
 * to any source rebuilds. Plain JavaScript, so that it costs no TypeScript loader.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const mtime = (file) => {
  try {
    return statSync(path.join(root, file)).mtimeMs
  } catch {
    return Number.NaN
  }
}

const built = mtime('dist/bundle/inputs.json')
const sources = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', ...readdirSync(path.join(root, 'src'), { recursive: true }).map((name) => path.join('src', name))]
const stale = !(built > 0) || sources.some((file) => !(mtime(file) < built))
if (stale) {
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
  process.exit(build.status ?? 1)
}
console.log('dist/ is current with src/: not rebuilt')
