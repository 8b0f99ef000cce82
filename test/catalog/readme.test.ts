/** The README's utility table is what the registry generates (`npm run catalog:readme`), so the two cannot drift. */
import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { catalog, defineOperation } from '../../src/server/catalog/registry.js'
import { README, renderCatalogTable, replaceCatalogSection } from '../../scripts/catalog-readme.js'

test("README.md's utility table is the one the registry generates", () => {
  const readme = readFileSync(README, 'utf8')
  const generated = replaceCatalogSection(readme, renderCatalogTable(catalog))
  if (generated !== readme) assert.unreachable('README.md differs from the catalog registry: run `npm run catalog:readme` and commit README.md')
})

test('one table row per registry row, with its status and the docs links of the offered rows', () => {
  const table = renderCatalogTable(catalog)
  const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| group '))
  assert.is(rows.length, catalog.length)
  assert.match(table, /\| Maker \| [^|]+ \| `POST \/api\/codeimage` \| local \| \*\*offered\*\* \(\[docs\/codeimage\.md\]\(docs\/codeimage\.md\)\) \|/)
  assert.match(table, /\| `POST \/api\/v1\/chat\/completions` \| gateway \| \*\*offered\*\* \(\[docs\/chat\.md\]\(docs\/chat\.md\)\) \|/)
  assert.match(table, /\| NSFW \| Adult content \|  \| provider \| \*\*not offered\*\*: Plaza does not serve adult content/)
  // A provider row names the protocols its service speaks (the provider layer's list) and the variable that configures it.
  assert.match(table, /`GET \/api\/imagine` \| provider: `openai-images`, `automatic1111`, `hf-inference` \(`PLAZA_IMAGES_BASE_URL`\) \| \*\*offered\*\* \(\[docs\/images\.md\]\(docs\/images\.md\)\) \|/)
  assert.match(table, /`GET \/api\/weather` \| provider: `open-meteo` \(`PLAZA_WEATHER_BASE_URL`\) \|/)
  const unknown = defineOperation({ group: 'Tools', method: 'GET', path: '/api/y', summary: 'y', backend: 'provider', providers: ['NOWHERE'] })
  assert.ok(renderCatalogTable([unknown]).endsWith('| `GET /api/y` | provider (`PLAZA_NOWHERE_BASE_URL`) | not built yet |'))
})

test('a pipe or line break in a summary cannot break the table', () => {
  const row = defineOperation({ group: 'Tools', method: 'GET', path: '/api/x', summary: 'a | b\nc', backend: 'local' })
  assert.ok(renderCatalogTable([row]).endsWith('| Tools | a \\| b c | `GET /api/x` | local | not built yet |'))
})

test('replaceCatalogSection: only between the markers, and refuses a README without them', () => {
  const readme = 'intro\n<!-- catalog:start -->\nold\n<!-- catalog:end -->\nrest\n'
  assert.is(replaceCatalogSection(readme, 'new'), 'intro\n<!-- catalog:start -->\nnew\n<!-- catalog:end -->\nrest\n')
  for (const broken of ['no markers', '<!-- catalog:end -->\n<!-- catalog:start -->', '<!-- catalog:start -->\n<!-- catalog:end -->\n<!-- catalog:start -->\n<!-- catalog:end -->']) {
    assert.throws(() => replaceCatalogSection(broken, 'new'), /README\.md needs one <!-- catalog:start --> line/)
  }
})

test.run()
