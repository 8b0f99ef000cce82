/**
 * The embedded CLI runs on `lazyAppRouter` (src/server/lazy-router.ts), the server on `appRouter`:
 * the same procedures, the lazy one's loaded on first call. A router added to one and not the
 * other would leave an embedded command without its procedure.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { getProcedureAtPath } from '@trpc/server/unstable-core-do-not-import'
import { lazyAppRouter } from '../../src/server/lazy-router.js'
import { appRouter } from '../../src/server/router.js'

test('every procedure of appRouter is found in lazyAppRouter, as the same procedure type', async () => {
  // codeimage is lazy in appRouter too: load it there first.
  await getProcedureAtPath(appRouter, 'codeimage.create').catch(() => null)
  const paths = Object.keys(appRouter._def.procedures)
  assert.ok(paths.length > 30, `appRouter has ${paths.length} procedures`)
  const missing: string[] = []
  for (const path of paths) {
    const lazy = await getProcedureAtPath(lazyAppRouter, path)
    const eager = (appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>)[path]
    if (!lazy || lazy._def.type !== eager._def.type) missing.push(path)
  }
  assert.equal(missing, [])
  assert.equal(Object.keys(lazyAppRouter._def.record).sort(), Object.keys(appRouter._def.record).sort())
})

test.run()
