import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer } from '../helpers/server.js'

test('health answers in the envelope', async () => {
  const server = await startTestServer()
  const res = await server.request('GET', '/health')
  assert.is(res.status, 200)
  assert.is(res.body.status, 'success')
  await server.close()
})

test.run()
