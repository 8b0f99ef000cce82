/** `plaza util list` for people: one block per group, each operation with its offered and configured marks. */
import { NOT_BUILT_YET, type CatalogEntry } from '../../shared/schemas/catalog.js'

const HEADERS = ['OFFERED', 'CONFIGURED', 'METHOD', 'PATH', 'SUMMARY']

function cellsOf(entry: CatalogEntry): string[] {
  const note = entry.offered ? '' : entry.reason === NOT_BUILT_YET || !entry.reason ? ` (${NOT_BUILT_YET})` : ` (not offered: ${entry.reason})`
  return [entry.offered ? 'yes' : 'no', entry.configured ? 'yes' : 'no', entry.method ?? '-', entry.path ?? '-', entry.summary + note]
}

/** The table, grouped in the order the groups first appear; `summary` closes it (the answer's message). */
export function formatCatalog(entries: readonly CatalogEntry[], summary: string): string {
  if (entries.length === 0) return `no operations match\n${summary}`
  const rows = entries.map((entry) => ({ group: entry.group, cells: cellsOf(entry) }))
  const widths = HEADERS.map((header, i) => Math.max(header.length, ...rows.map((row) => row.cells[i].length)))
  // The last column is left unpadded, so a long summary does not pad every line.
  const line = (cells: string[]) => '  ' + cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')
  const lines = [line(HEADERS)]
  let group: string | null = null
  for (const row of rows) {
    if (row.group !== group) {
      group = row.group
      lines.push(group)
    }
    lines.push(line(row.cells))
  }
  return [...lines, summary].join('\n')
}
