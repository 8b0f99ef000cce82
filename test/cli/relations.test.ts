/** `plaza social block|unblock|blocked|mute|unmute|muted`, embedded on one data directory shared by two accounts. */
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { tempDir } from '../helpers/server.js'
import { shell, type Shell } from './cli.js'

const PASSWORD = 'correct horse battery'
const dataDir = tempDir('plaza-cli-relations-')
let erin: Shell
let gus: Shell

test.before(async () => {
  erin = shell({ dataDir })
  gus = shell({ dataDir })
  for (const [who, name] of [[erin, 'erin'], [gus, 'gus']] as const) {
    const registered = await who.run(['social', 'register', '-u', name, '-e', `${name}@example.com`, '--password-stdin'], { input: PASSWORD })
    assert.is(registered.code, 0, registered.stderr)
  }
  assert.is((await gus.run(['social', 'follow', 'erin'])).code, 0)
})

test.after(() => {
  for (const dir of [dataDir, erin.configHome, gus.configHome]) rmSync(dir, { recursive: true, force: true })
})

test('block hides both sides and lists the blocked; unblock lifts it', async () => {
  const blocked = await erin.run(['social', 'block', 'gus'])
  assert.is(blocked.code, 0, blocked.stderr)
  assert.is(blocked.stdout, 'blocked gus\n')
  const list = await erin.run(['social', 'blocked', '--json'])
  assert.equal(JSON.parse(list.stdout).users.map((u: { username: string }) => u.username), ['gus'])
  // The follow went, and neither side sees the other.
  const hidden = await gus.run(['social', 'profile', 'erin'])
  assert.is(hidden.code, 1)
  assert.match(hidden.stderr, /User not found/)
  assert.is((await erin.run(['social', 'follow', 'gus'])).code, 1)
  const unblocked = await erin.run(['social', 'unblock', 'gus', '--json'])
  assert.equal(JSON.parse(unblocked.stdout), { user_id: 2, is_blocked: false })
  assert.match((await gus.run(['social', 'profile', 'erin'])).stdout, /0 followers/)
  assert.match((await erin.run(['social', 'blocked'])).stdout, /you have blocked no one/)
})

test('mute and unmute, and the muted list', async () => {
  assert.is((await gus.run(['social', 'mute', 'erin'])).stdout, 'muted erin\n')
  assert.equal(JSON.parse((await gus.run(['social', 'muted', '--json'])).stdout).users.map((u: { username: string }) => u.username), ['erin'])
  assert.equal(JSON.parse((await gus.run(['social', 'unmute', 'erin', '--json'])).stdout), { user_id: 1, is_muted: false })
  assert.match((await gus.run(['social', 'muted'])).stdout, /you have muted no one/)
})

test('blocking yourself fails with the API message (exit 1); a missing argument is a usage error (exit 2)', async () => {
  const self = await erin.run(['social', 'block', 'erin'])
  assert.is(self.code, 1)
  assert.match(self.stderr, /You cannot block yourself/)
  assert.is((await erin.run(['social', 'mute'])).code, 2)
})

test.run()
