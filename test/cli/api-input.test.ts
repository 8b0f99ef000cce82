import { Readable } from 'node:stream'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parseFields, readInput, STDIN_LIMIT } from '../../src/cli/api.js'
import { UsageError } from '../../src/cli/client.js'
import { SessionStore } from '../../src/cli/config.js'
import { tempDir } from '../helpers/server.js'

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

test('fields and accounts named after Object.prototype are entries like any other (issue #44)', async () => {
  const fields = await parseFields(['__proto__=x', 'constructor[]=1', 'toString=y'], ['hasOwnProperty[]=2'], async () => '')
  assert.is(JSON.stringify(fields), '{"__proto__":"x","constructor":["1"],"toString":"y","hasOwnProperty":[2]}')
  assert.is(Object.getPrototypeOf(fields), null)

  const store = new SessionStore(tempDir())
  const session = (username: string) => ({ token: `t-${username}`, username, expires_at: '2030-01-01T00:00:00Z' })
  store.set('http://a', session('alice'))
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'prototype']) {
    assert.is(store.get('http://a', name), undefined, name)
    assert.is(store.switch('http://a', name), undefined, name)
    assert.is(store.get(name), undefined, name)
  }
  store.set('http://a', session('__proto__'))
  store.set('__proto__', session('constructor'))
  assert.is(store.get('http://a', '__proto__')?.token, 't-__proto__')
  assert.is(store.switch('http://a', 'alice')?.token, 't-alice')
  assert.equal(store.accounts('http://a').map((a) => a.username), ['alice', '__proto__'])
  assert.is(store.get('__proto__')?.token, 't-constructor')
})

test.run()
