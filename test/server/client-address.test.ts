import type { IncomingMessage } from 'node:http'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { clientAddress, normaliseAddress } from '../../src/server/client-address.js'
import { DEFAULT_RATE_LIMITS, parseTrustProxy } from '../../src/server/config.js'
import { startTestServer } from '../helpers/server.js'

function request(socket: string | undefined, headers: Record<string, string> = {}): IncomingMessage {
  return { socket: { remoteAddress: socket }, headers } as unknown as IncomingMessage
}

test('normaliseAddress strips ports and brackets, unmaps IPv4-mapped IPv6, refuses what is not an address', () => {
  const cases: [string | undefined, string | null][] = [
    ['1.2.3.4', '1.2.3.4'],
    [' 1.2.3.4 ', '1.2.3.4'],
    ['1.2.3.4:5678', '1.2.3.4'],
    ['[2001:DB8::1]:443', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['2001:db8::1', '2001:db8::1'],
    ['::ffff:10.0.0.7', '10.0.0.7'],
    ['[::ffff:10.0.0.7]:80', '10.0.0.7'],
    ['::1', '::1'],
    ['unknown', null],
    ['_hidden', null],
    ['', null],
    ['1.2.3.4, 5.6.7.8', null],
    ['999.1.1.1', null],
    ['<script>', null],
    [undefined, null],
  ]
  for (const [input, expected] of cases) assert.is(normaliseAddress(input), expected, String(input))
})

const XFF = 'x-forwarded-for'
test('clientAddress walks leftwards from the socket through trusted proxies only', () => {
  const cases: [string, string | undefined, Record<string, string>, string][] = [
    // [PLAZA_TRUST_PROXY, socket, headers, client]
    ['', '10.0.0.1', { [XFF]: '6.6.6.6' }, '10.0.0.1'],
    ['', '::ffff:10.0.0.1', {}, '10.0.0.1'],
    ['', undefined, {}, 'unknown'],
    ['1', '10.0.0.1', {}, '10.0.0.1'],
    ['1', '10.0.0.1', { [XFF]: '203.0.113.9' }, '203.0.113.9'],
    ['1', '10.0.0.1', { [XFF]: '6.6.6.6, 203.0.113.9' }, '203.0.113.9'],
    ['2', '10.0.0.1', { [XFF]: '6.6.6.6, 203.0.113.9, 10.0.0.2' }, '203.0.113.9'],
    ['5', '10.0.0.1', { [XFF]: '203.0.113.9, 10.0.0.2' }, '203.0.113.9'],
    ['1', '10.0.0.1', { [XFF]: '203.0.113.9:5555' }, '203.0.113.9'],
    ['1', '10.0.0.1', { [XFF]: '[2001:db8::9]:5555' }, '2001:db8::9'],
    ['1', '10.0.0.1', { [XFF]: '::ffff:203.0.113.9' }, '203.0.113.9'],
    ['1', '10.0.0.1', { [XFF]: 'garbage' }, '10.0.0.1'],
    ['2', '10.0.0.1', { [XFF]: '203.0.113.9, not-an-ip' }, '10.0.0.1'],
    ['2', '10.0.0.1', { [XFF]: 'not-an-ip, 10.0.0.2' }, '10.0.0.2'],
    ['1', '10.0.0.1', { [XFF]: '' }, '10.0.0.1'],
    ['1', '10.0.0.1', { forwarded: 'for=203.0.113.9;proto=https;by=10.0.0.1' }, '203.0.113.9'],
    ['1', '10.0.0.1', { forwarded: 'for=6.6.6.6, For="[2001:db8:cafe::17]:4711"' }, '2001:db8:cafe::17'],
    ['1', '10.0.0.1', { forwarded: 'for=unknown' }, '10.0.0.1'],
    ['1', '10.0.0.1', { forwarded: 'proto=https' }, '10.0.0.1'],
    ['1', '10.0.0.1', { [XFF]: '203.0.113.9', forwarded: 'for=6.6.6.6' }, '203.0.113.9'],
    ['10.0.0.0/8', '10.0.0.1', { [XFF]: '6.6.6.6, 203.0.113.9, 10.9.9.9' }, '203.0.113.9'],
    ['10.0.0.1, 10.0.0.2', '10.0.0.1', { [XFF]: '203.0.113.9, 10.0.0.3' }, '10.0.0.3'],
    ['10.0.0.1', '10.0.0.5', { [XFF]: '203.0.113.9' }, '10.0.0.5'],
    ['10.0.0.0/8', '::ffff:10.0.0.1', { [XFF]: '203.0.113.9' }, '203.0.113.9'],
    ['10.0.0.0/8', '10.0.0.1', { [XFF]: '10.1.1.1, 10.2.2.2' }, '10.1.1.1'],
    ['fd00::/8, ::1', '::1', { [XFF]: '2001:db8::9, fd12::1' }, '2001:db8::9'],
    ['fd00::/8', '::1', { [XFF]: '2001:db8::9' }, '::1'],
    ['10.0.0.0/8', '10.0.0.1', { [XFF]: '203.0.113.9, bogus, 10.0.0.2' }, '10.0.0.2'],
  ]
  for (const [trust, socket, headers, expected] of cases) {
    assert.is(clientAddress(request(socket, headers), parseTrustProxy(trust)), expected, `${trust} | ${socket} | ${JSON.stringify(headers)}`)
  }
})

/** A failed login through the proxy; each client guesses at an account of its own, so only the per-address count is in play. */
const login = (server: Awaited<ReturnType<typeof startTestServer>>, forwardedFor: string) =>
  server.request('POST', '/api/mobile/auth/login', { body: { email: `someone${forwardedFor.replace(/\W/g, '')}@example.com`, password: 'password1' }, headers: { [XFF]: forwardedFor } })

test('without PLAZA_TRUST_PROXY a spoofed X-Forwarded-For does not escape the socket address’s bucket', async () => {
  const server = await startTestServer({ rateLimits: DEFAULT_RATE_LIMITS })
  for (let i = 1; i <= 5; i++) assert.is((await login(server, `198.51.100.${i}`)).status, 401)
  const sixth = await login(server, '198.51.100.6')
  assert.is(sixth.status, 429)
  assert.is(sixth.body.status, 'error')
  assert.ok(Number(sixth.headers.get('retry-after')) > 0)
  await server.close()
})

test('with PLAZA_TRUST_PROXY=1 each X-Forwarded-For client has its own bucket', async () => {
  const server = await startTestServer({ env: { PLAZA_TRUST_PROXY: '1' }, rateLimits: DEFAULT_RATE_LIMITS })
  for (let i = 0; i < 5; i++) assert.is((await login(server, '198.51.100.1')).status, 401)
  assert.is((await login(server, '198.51.100.1')).status, 429)
  assert.is((await login(server, '198.51.100.2')).status, 401, 'another client behind the proxy is not limited')
  assert.is((await login(server, '6.6.6.6, 198.51.100.1')).status, 429, 'a client cannot prepend its way out')
  await server.close()
})

test('with a PLAZA_TRUST_PROXY list that leaves out 127.0.0.1, X-Forwarded-For is ignored', async () => {
  const server = await startTestServer({ env: { PLAZA_TRUST_PROXY: '10.0.0.0/8, ::1' }, rateLimits: DEFAULT_RATE_LIMITS })
  for (let i = 1; i <= 5; i++) assert.is((await login(server, `198.51.100.${i}`)).status, 401)
  assert.is((await login(server, '198.51.100.6')).status, 429)
  await server.close()
})

test.run()
