/**
 * Deleting and editing content and the account lifecycle through the real `plaza` binary, embedded
 * and against a server: post edit/delete (confirmation), comment delete (beside `comment POST TEXT`),
 * story delete, sessions and revoke, password, account delete.
 */
import { readFileSync, rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js'
import { ROOT } from '../helpers/cli.js'
import { shell, type Shell } from './cli.js'

const PASSWORD = 'correct horse battery'
const VERSION = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')).version as string
const cleanup: string[] = []
let server: TestServer

test.before(async () => {
  server = await startTestServer()
})
test.after(async () => {
  await server.close()
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true })
})

function person(target: { url: string } | { dataDir: string }): Shell {
  const who = shell(target)
  cleanup.push(who.configHome)
  return who
}

async function register(who: Shell, name: string) {
  return who.json(['social', 'register', '--username', name, '--email', `${name}@example.com`, '--password-stdin'], { input: PASSWORD })
}

test('embedded: edit and delete a post, delete a comment and a story; deleting asks for --yes without a terminal', async () => {
  const dataDir = tempDir('plaza-cli-content-')
  cleanup.push(dataDir)
  const alice = person({ dataDir })
  const bob = person({ dataDir })
  await register(alice, 'ed_alice')
  await register(bob, 'ed_bob')

  const created = await alice.json(['social', 'post', 'create', 'first draft #draft'])
  assert.is(created.edited_at, null)
  const edited = await alice.json(['social', 'post', 'edit', String(created.id), 'final text #final', '--private'])
  assert.equal([edited.content, edited.is_public], ['final text #final', false])
  assert.match(edited.edited_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
  const nothing = await alice.run(['social', 'post', 'edit', String(created.id)])
  assert.is(nothing.code, 2)
  assert.match(nothing.stderr, /nothing to change/)
  const both = await alice.run(['social', 'post', 'edit', String(created.id), '--public', '--private'])
  assert.is(both.code, 2)

  // `comment POST TEXT` still comments; `comment delete ID` deletes.
  const open = await alice.json(['social', 'post', 'create', 'comment here'])
  const comment = await bob.json(['social', 'comment', String(open.id), 'hello'])
  assert.is(comment.content, 'hello')
  const notYours = await bob.run(['social', 'post', 'delete', String(open.id), '--yes'])
  assert.is(notYours.code, 1)
  assert.match(notYours.stderr, /You can only delete your own posts/)
  assert.is((await alice.run(['social', 'comment', 'delete', String(comment.id), '--json'])).stdout.trim(), 'null')
  assert.is((await alice.json(['social', 'post', 'show', String(open.id)])).post.comments_count, 0)

  const unconfirmed = await alice.run(['social', 'post', 'delete', String(open.id)])
  assert.is(unconfirmed.code, 2)
  assert.match(unconfirmed.stderr, /--yes/)
  assert.is((await alice.json(['social', 'post', 'show', String(open.id)])).post.id, open.id, 'nothing was deleted')
  const deleted = await alice.run(['social', 'post', 'delete', String(open.id), '--yes'])
  assert.is(deleted.code, 0, deleted.stderr)
  assert.match(deleted.stdout, /deleted post/)
  assert.is((await alice.run(['social', 'post', 'show', String(open.id)])).code, 1)

  const story = await alice.json(['social', 'story', 'create', '--text', 'brief'])
  assert.is((await alice.run(['social', 'story', 'delete', String(story.id), '--json'])).stdout.trim(), 'null')
  assert.is((await bob.run(['social', 'story', 'view', String(story.id)])).code, 1)
})

test('remote: sessions name the CLI, revoke one, change the password, then delete the account', async () => {
  const laptop = person({ url: server.url })
  const phone = person({ url: server.url })
  await register(laptop, 'life_carol')
  await phone.json(['social', 'login', '--email', 'life_carol', '--password-stdin'], { input: PASSWORD })

  const { sessions } = await laptop.json(['social', 'sessions'])
  assert.is(sessions.length, 2)
  assert.ok(sessions.every((s: any) => s.user_agent === `plaza-cli/${VERSION}`), JSON.stringify(sessions))
  assert.equal(sessions.map((s: any) => s.current), [false, true], 'newest (the phone) first; this is the laptop')
  const human = await laptop.run(['social', 'sessions'])
  assert.match(human.stdout, new RegExp(`^\\* ${sessions[1].id}\\t`, 'm'))
  assert.not.ok(laptop.transcript.join('').includes(Object.values(laptop.sessions())[0].token))

  // Revoking the phone's session from the laptop logs the phone out.
  assert.is((await laptop.run(['social', 'sessions', 'revoke', String(sessions[0].id)])).code, 0)
  assert.is((await phone.run(['social', 'whoami'])).code, 4)
  assert.is((await laptop.run(['social', 'sessions', 'revoke', '999999'])).code, 1)

  await phone.json(['social', 'login', '--email', 'life_carol', '--password-stdin'], { input: PASSWORD })
  const wrong = await laptop.run(['social', 'password', '--password-stdin'], { input: 'not the password\nnew password here\n' })
  assert.is(wrong.code, 1)
  assert.match(wrong.stderr, /Wrong password/)
  assert.is((await laptop.run(['social', 'password', '--password-stdin'], { input: `${PASSWORD}\n` })).code, 2, 'two lines are needed')
  const changed = await laptop.json(['social', 'password', '--password-stdin'], { input: `${PASSWORD}\nnew password here\n` })
  assert.equal(changed, { revoked_sessions: 1 })
  assert.is((await phone.run(['social', 'whoami'])).code, 4, 'the other session is gone')
  assert.is((await laptop.run(['social', 'whoami'])).code, 0, 'this one stays')

  const unconfirmed = await laptop.run(['social', 'account', 'delete', '--password-stdin'], { input: 'new password here' })
  assert.is(unconfirmed.code, 2)
  const wrongPassword = await laptop.run(['social', 'account', 'delete', '--yes', '--password-stdin'], { input: PASSWORD })
  assert.is(wrongPassword.code, 1)
  assert.match(wrongPassword.stderr, /Wrong password/)
  const gone = await laptop.run(['social', 'account', 'delete', '--yes', '--password-stdin', '--json'], { input: 'new password here' })
  assert.is(gone.code, 0, gone.stderr)
  assert.is(gone.stdout.trim(), 'null')
  assert.equal(laptop.sessions(), {}, 'the stored session is removed')
  const profile = await server.request('GET', '/api/mobile/user/profile/life_carol', { token: (await server.request('POST', '/api/mobile/auth/register', {
    body: { username: 'life_carol', email: 'life_carol@example.com', password: PASSWORD },
  })).body.data.token })
  assert.is(profile.status, 200, 'the username was free to register again')
  assert.is(profile.body.data.posts_count, 0)
})

test.run()
