/**
 * A representative part of the social suite (social-suite.ts SUBSET: likes and comments, search
 * on FTS5, transactional moderation, explore) run against real sqld servers, as the whole suite is
 * by `npm run test:hrana`: the same tests, passing over a libsql server as on a local file.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runOnSqld, socialFiles, SUBSET } from './social-suite.js'

test('the social subset passes with its database on sqld', async () => {
  const { code, output } = await runOnSqld(socialFiles(SUBSET))
  const summary = /(\d+) passed, (\d+) failed/.exec(output)
  assert.ok(summary, output)
  assert.is(Number(summary![2]), 0, output)
  assert.ok(Number(summary![1]) >= 10, `only ${summary![1]} tests ran\n${output}`)
  assert.is(code, 0, output)
})

test.run()
