/**
 * Writes the README's utility table from the catalog registry: `npm run catalog:readme` rewrites
 * what lies between the `<!-- catalog:start -->` and `<!-- catalog:end -->` markers of README.md,
 * and test/catalog/readme.test.ts fails when the README differs from what this generates, so the
 * table and the registry cannot drift apart.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { isOffered } from '../src/server/catalog/offered.js'
import type { Operation } from '../src/server/catalog/registry.js'
import { SERVICE_PROTOCOLS } from '../src/server/providers/config.js'

export const START = '<!-- catalog:start -->'
export const END = '<!-- catalog:end -->'
export const README = fileURLToPath(new URL('../README.md', import.meta.url))

/** A table cell: pipes would end it and line breaks would end the row. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ')

/** The protocols a provider service speaks, from the provider layer's own list (none for a service it does not know yet). */
function protocolsOf(name: string): readonly string[] {
  return (SERVICE_PROTOCOLS as Record<string, readonly string[]>)[name.toLowerCase()] ?? []
}

/** `local`, `gateway`, or `provider: <protocols> (PLAZA_<NAME>_BASE_URL)`: where the work is done and which protocol reaches it. */
function backedBy(operation: Operation): string {
  if (operation.backend !== 'provider' || !operation.providers?.length) return operation.backend
  const protocols = [...new Set(operation.providers.flatMap(protocolsOf))]
  const variables = operation.providers.map((name) => `\`PLAZA_${name}_BASE_URL\``).join(' or ')
  return `provider${protocols.length ? `: ${protocols.map((p) => `\`${p}\``).join(', ')}` : ''} (${variables})`
}

function status(operation: Operation): string {
  if (isOffered(operation)) return `**offered**${operation.docs ? ` ([${operation.docs}](${operation.docs}))` : ''}`
  if (operation.notOffered) return `**not offered**: ${operation.notOffered}`
  return 'not built yet'
}

/** The Markdown table of every row, in registry order, with a note that it is generated. */
export function renderCatalogTable(rows: readonly Operation[]): string {
  const lines = [
    '<!-- Generated from src/server/catalog/registry.ts by `npm run catalog:readme`; edit the registry, not this table. -->',
    '| group | operation | method and path | backed by | in Plaza |',
    '|---|---|---|---|---|',
    ...rows.map((row) => {
      const where = row.method && row.path ? `\`${row.method} ${row.path}\`` : ''
      return `| ${cell(row.group)} | ${cell(row.summary)} | ${where} | ${cell(backedBy(row))} | ${cell(status(row))} |`
    }),
  ]
  return lines.join('\n')
}

/** `readme` with the text between the markers replaced by `table`; the markers must each appear once, in order. */
export function replaceCatalogSection(readme: string, table: string): string {
  const start = readme.indexOf(START)
  const end = readme.indexOf(END)
  if (start < 0 || end < 0 || end < start || readme.indexOf(START, start + 1) >= 0 || readme.indexOf(END, end + 1) >= 0) {
    throw new Error(`README.md needs one ${START} line followed by one ${END} line around the utility table`)
  }
  return `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`
}

async function main() {
  const { catalog } = await import('../src/server/catalog/registry.js')
  const readme = readFileSync(README, 'utf8')
  const updated = replaceCatalogSection(readme, renderCatalogTable(catalog))
  if (updated === readme) return console.log(`README.md: the catalog table is up to date (${catalog.length} operations)`)
  writeFileSync(README, updated)
  console.log(`README.md: catalog table rewritten (${catalog.length} operations)`)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main()
