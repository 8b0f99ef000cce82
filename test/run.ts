/**
 * Runs the uvu suites (every `*.test.ts` under test/, or under the folders given as arguments),
 * prints a closing `N passed, N failed` line, and exits even if a test left a handle open.
 */
import { parse } from 'uvu/parse'
import { run } from 'uvu/run'

const dirs = process.argv.slice(2)
const suites = []
for (const dir of dirs.length ? dirs : ['test']) suites.push(...(await parse(dir, /\.test\.ts$/, {})).suites)

let output = ''
const write = process.stdout.write.bind(process.stdout)
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  output += String(chunk)
  return (write as (...args: unknown[]) => boolean)(chunk, ...rest)
}) as typeof process.stdout.write

await run(suites, { bail: false })

const plain = output.replace(/\x1b\[[0-9;]*m/g, '')
const count = (label: string) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(plain)?.[1] ?? 0)
const total = count('Total')
const passed = count('Passed')
const skipped = count('Skipped')
process.stdout.write = write
console.log(`${passed} passed, ${total - passed - skipped} failed${skipped ? `, ${skipped} skipped` : ''}`)
process.exit(total === 0 || passed + skipped < total ? 1 : 0)
