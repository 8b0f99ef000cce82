import { Readable } from 'node:stream'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readInput, STDIN_LIMIT } from '../../src/cli/api.js'
import { UsageError } from '../../src/cli/client.js'

test('stdin for plaza api is read whole up to the limit', async () => {
  assert.is(await readInput(Readable.from([Buffer.from('{"content":'), Buffer.from('"hé"}')]), 64), '{"content":"hé"}')
  assert.is(STDIN_LIMIT, 32 * 1024 * 1024)
})

test('stdin past the limit is a usage error, and reading stops there', async () => {
  let pulled = 0
  async function* endless() {
    for (;;) {
      pulled++
      yield Buffer.alloc(1024, 'a')
    }
  }
  try {
    await readInput(endless(), 10 * 1024)
    assert.unreachable('an endless stdin was read to its end')
  } catch (error) {
    assert.instance(error, UsageError)
    assert.match((error as Error).message, /stdin holds more than/)
  }
  assert.is(pulled, 11)
})

test.run()
