/** `plaza social profile update --private|--public`, `follow` of a private account, `follow-requests`, `approve`, `deny`: embedded, three accounts on one data directory. */
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { tempDir } from '../helpers/server.js'
import { shell, type Shell } from './cli.js'

const PASSWORD = 'correct horse battery'
const dataDir = tempDir('plaza-cli-requests-')
let pia: Shell
let rob: Shell
let sue: Shell

test.before(async () => {
  pia = shell({ dataDir })
  rob = shell({ dataDir })
  sue = shell({ dataDir })
  for (const [who, name] of [[pia, 'pia'], [rob, 'rob'], [sue, 'sue']] as const) {
    const registered = await who.run(['social', 'register', '-u', name, '-e', `${name}@example.com`, '--password-stdin'], { input: PASSWORD })
    assert.is(registered.code, 0, registered.stderr)
  }
})

test.after(() => {
  for (const dir of [dataDir, pia.configHome, rob.configHome, sue.configHome]) rmSync(dir, { recursive: true, force: true })
})

test('a private account: following asks, the owner lists, approves and denies', async () => {
  const made = await pia.run(['social', 'profile', 'update', '--private'])
  assert.is(made.code, 0, made.stderr)
  assert.match(made.stdout, /@pia .*· private/)
  const asked = await rob.run(['social', 'follow', 'pia'])
  assert.is(asked.stdout.split('\n')[0], 'asked to follow @pia (a private account): waiting for approval')
  assert.equal((await sue.json(['social', 'follow', 'pia'])).follow_requested, true)
  // Until approved: the profile, not the posts.
  const posts = await rob.run(['social', 'posts', 'pia'])
  assert.is(posts.code, 1)
  assert.match(posts.stderr, /This account is private/)
  const listed = await pia.run(['social', 'follow-requests'])
  assert.match(listed.stdout, /^@sue .*\n@rob /)
  assert.equal((await pia.json(['social', 'follow-requests'])).users.map((u: { username: string }) => u.username), ['sue', 'rob'])
  assert.is((await pia.run(['social', 'approve', 'rob'])).stdout, 'rob now follows you\n')
  assert.equal(await pia.json(['social', 'deny', 'sue']), { user_id: 3, state: 'denied' })
  assert.match((await pia.run(['social', 'follow-requests'])).stdout, /no follow requests/)
  assert.is((await rob.run(['social', 'posts', 'pia'])).code, 0)
  const again = await pia.run(['social', 'approve', 'sue'])
  assert.is(again.code, 1)
  assert.match(again.stderr, /Follow request not found/)
  assert.is((await pia.run(['social', 'approve'])).code, 2)
  // Public again: the profile says so.
  assert.equal((await pia.json(['social', 'profile', 'update', '--public'])).is_private, false)
  assert.is((await pia.run(['social', 'profile', 'update', '--public', '--private'])).code, 2)
})

test.run()
