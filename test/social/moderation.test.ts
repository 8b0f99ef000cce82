/**
 * The operator's moderation commands through the built `plaza` binary, on the data directory of a
 * server that keeps serving meanwhile: list reports, dismiss, remove (gone for everyone), suspend
 * (403 at login and for the token), unsuspend (the same token works again), and the record of
 * every action. Also `plaza social report`, remote and embedded.
 */
import { existsSync, rmSync } from 'node:fs'
import { userInfo } from 'node:os'
import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { actionsQuery, reportsQuery } from '../../src/server/domain/moderation.js'
import { shell, writePng } from '../cli/cli.js'
import { runCli } from '../helpers/cli.js'
import { registerUser, startTestServer, tempDir, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { post } from './helpers.js'

const BUILT = fileURLToPath(new URL('../../dist/cli/commands/admin/reports/resolve.js', import.meta.url))
const API = '/api/mobile'
const SUSPENDED = 'This account has been suspended'

let server: TestServer
let dataDir: string
test.before(async () => {
  if (!existsSync(BUILT)) throw new Error('dist/ is missing admin reports resolve: run `npm run build` first (npm test does)')
  dataDir = tempDir()
  server = await startTestServer({ dataDir })
})
test.after(async () => {
  await server.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const admin = (args: string[]) => runCli(['admin', ...args, '--data-dir', dataDir])
async function adminJson<T = any>(args: string[]): Promise<T> {
  const run = await admin([...args, '--json'])
  assert.is(run.code, 0, `plaza admin ${args.join(' ')}: ${run.stderr}`)
  return JSON.parse(run.stdout)
}

async function report(user: RegisteredUser, target_type: string, target_id: number, reason = 'spam', note?: string): Promise<number> {
  const res = await server.request('POST', `${API}/reports`, { token: user.token, body: { target_type, target_id, reason, note } })
  assert.is(res.status, 201, JSON.stringify(res.body))
  return res.body.data.report.id
}

const login = (user: RegisteredUser) => server.request('POST', `${API}/auth/login`, { body: { email: user.username, password: 'correct horse' } })
const detail = (postId: number, token?: string) => server.request('GET', `${API}/posts/detail/${postId}`, { token })

test('admin reports lists every report newest first with target, excerpt, reporter and reason; --open and --limit', async () => {
  const author = await registerUser(server, 'list_author')
  const alice = await registerUser(server, 'list_alice')
  const p = await post(server, author.token, { content: 'Cheap   watches\nat example.com ' + 'x'.repeat(100) })
  const first = await report(alice, 'post', p.id, 'spam', 'third time today')
  const second = await report(alice, 'user', author.id, 'harassment')

  const all = await adminJson(['reports'])
  const mine = all.filter((r: any) => [first, second].includes(r.id))
  assert.equal(mine.map((r: any) => r.id), [second, first], 'newest first')
  assert.equal(mine[1], {
    ...mine[1],
    target_type: 'post',
    target_id: p.id,
    target_user_id: author.id,
    target_username: 'list_author',
    reporter_id: alice.id,
    reporter_username: 'list_alice',
    reason: 'spam',
    note: 'third time today',
    status: 'open',
    resolution: null,
    resolved_at: null,
  })
  assert.is(mine[1].excerpt.length, 80)
  assert.ok(mine[1].excerpt.startsWith('Cheap watches at example.com xxx'), mine[1].excerpt)
  assert.is(mine[0].excerpt, '@list_author')

  const limited = await adminJson(['reports', '--limit', '1'])
  assert.is(limited.length, 1)
  assert.is(limited[0].id, all[0].id)

  const human = await admin(['reports', '--open'])
  assert.is(human.code, 0, human.stderr)
  assert.match(human.stdout, new RegExp(`#${first}  open  post ${p.id} by @list_author  spam  reported by @list_alice at \\d{4}-`))
  assert.match(human.stdout, /"Cheap watches at example\.com x+…"/)
  assert.match(human.stdout, /note: third time today/)
})

test('dismiss resolves only that report and records it; a second resolution is refused (exit 1)', async () => {
  const author = await registerUser(server, 'dismiss_author')
  const alice = await registerUser(server, 'dismiss_alice')
  const carol = await registerUser(server, 'dismiss_carol')
  const p = await post(server, author.token, { content: 'harmless' })
  const a = await report(alice, 'post', p.id)
  const c = await report(carol, 'post', p.id)

  const result = await adminJson(['reports', 'resolve', String(a), '--action', 'dismiss', '--note', 'not spam', '--moderator', 'mod_dana'])
  assert.is(result.report.id, a)
  assert.is(result.report.status, 'resolved')
  assert.is(result.report.resolution, 'dismiss')
  assert.match(result.report.resolved_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
  assert.equal(result.also_resolved, [])
  assert.equal({ ...result.action, id: 0, created_at: '' }, {
    id: 0,
    moderator: 'mod_dana',
    action: 'dismiss',
    report_id: a,
    target_type: 'post',
    target_id: p.id,
    target_username: null,
    note: 'not spam',
    created_at: '',
  })
  assert.is((await detail(p.id)).status, 200, 'the post stays')
  const open = await adminJson(['reports', '--open'])
  assert.ok(open.some((r: any) => r.id === c), "carol's report is still open")
  assert.not.ok(open.some((r: any) => r.id === a))

  const again = await admin(['reports', 'resolve', String(a), '--action', 'remove'])
  assert.is(again.code, 1)
  assert.match(again.stderr, new RegExp(`report ${a} is already resolved \\(dismiss\\)`))
  assert.is((await detail(p.id)).status, 200, 'a refused resolution changes nothing')
  // Once resolved, the reporter may report the same post again.
  await report(alice, 'post', p.id)

  const human = await admin(['reports', 'resolve', String(c), '--action', 'dismiss'])
  assert.is(human.code, 0, human.stderr)
  assert.match(human.stdout, new RegExp(`report ${c} resolved: dismissed`))
})

test('remove deletes the post for everyone (counters exact) and resolves every open report about it and its comments', async () => {
  const author = await registerUser(server, 'remove_author')
  const alice = await registerUser(server, 'remove_alice')
  const carol = await registerUser(server, 'remove_carol')
  const p = await post(server, author.token, { content: 'remove me #gone' })
  const kept = await post(server, author.token, { content: 'keep me' })
  const comment = await server.request('POST', `${API}/interactions/comment/${p.id}`, { token: carol.token, body: { content: 'me too' } })
  await server.request('POST', `${API}/interactions/like/${p.id}`, { token: alice.token })
  const a = await report(alice, 'post', p.id)
  const c = await report(carol, 'post', p.id, 'hate')
  const onComment = await report(alice, 'comment', comment.body.data.id, 'harassment')
  const onOther = await report(alice, 'post', kept.id)

  const result = await adminJson(['reports', 'resolve', String(a), '--action', 'remove', '--moderator', 'mod_dana', '--note', 'scam'])
  assert.is(result.report.resolution, 'remove')
  assert.equal(result.also_resolved, [c, onComment].sort((x, y) => x - y))
  assert.is(result.action.action, 'remove')
  assert.is(result.action.target_type, 'post')
  assert.is(result.action.target_id, p.id)
  assert.is(result.report.excerpt, null, 'the listing shows the content is gone')

  for (const token of [author.token, alice.token, carol.token, undefined]) assert.is((await detail(p.id, token)).status, 404)
  assert.is((await detail(kept.id)).status, 200)
  const profile = await server.request('GET', `${API}/user/profile/${author.id}`, { token: alice.token })
  assert.is(profile.body.data.posts_count, 1)
  const byUser = await server.request('GET', `${API}/posts/user/${author.id}`)
  assert.equal(byUser.body.data.posts.map((x: any) => x.id), [kept.id])
  const search = await server.request('GET', `${API}/search/hashtags?q=gone`)
  assert.equal(search.body.data.hashtags.filter((h: any) => h.posts_count > 0), [])

  const reports = await adminJson(['reports'])
  const byId = new Map<number, any>(reports.map((r: any) => [r.id, r]))
  for (const id of [a, c, onComment]) assert.equal([byId.get(id).status, byId.get(id).resolution], ['resolved', 'remove'])
  assert.is(byId.get(onOther).status, 'open')
})

test('remove works on comments and stories; on a user report it is a usage error that changes nothing', async () => {
  const author = await registerUser(server, 'rm2_author')
  const alice = await registerUser(server, 'rm2_alice')
  const p = await post(server, alice.token, { content: 'a thread' })
  const comment = await server.request('POST', `${API}/interactions/comment/${p.id}`, { token: author.token, body: { content: 'rude words' } })
  const story = await server.request('POST', `${API}/stories/create`, { token: author.token, body: { content_type: 'text', text_content: 'rude story' } })
  const onComment = await report(alice, 'comment', comment.body.data.id, 'harassment')
  const onStory = await report(alice, 'story', story.body.data.id, 'hate')
  const onUser = await report(alice, 'user', author.id, 'harassment')

  const listed = await adminJson(['reports', '--open'])
  assert.is(listed.find((r: any) => r.id === onStory).excerpt, 'rude story')
  assert.is(listed.find((r: any) => r.id === onComment).excerpt, 'rude words')

  assert.is((await admin(['reports', 'resolve', String(onComment), '--action', 'remove'])).code, 0)
  const thread = await detail(p.id, alice.token)
  assert.equal(thread.body.data.comments, [])
  assert.is(thread.body.data.post.comments_count, 0)

  assert.is((await admin(['reports', 'resolve', String(onStory), '--action', 'remove'])).code, 0)
  assert.is((await server.request('GET', `${API}/stories/view/${story.body.data.id}`, { token: alice.token })).status, 404)

  const refused = await admin(['reports', 'resolve', String(onUser), '--action', 'remove'])
  assert.is(refused.code, 2)
  assert.match(refused.stderr, /report \d+ is about a user: use --action suspend/)
  assert.ok((await adminJson(['reports', '--open'])).some((r: any) => r.id === onUser), 'still open')
  assert.is((await login(author)).status, 200)
})

test('suspend (from a report) refuses login and the token with 403, resolves every open report about the user; unsuspend restores the same token', async () => {
  const mallory = await registerUser(server, 'mallory')
  const alice = await registerUser(server, 'susp_alice')
  const carol = await registerUser(server, 'susp_carol')
  const p = await post(server, mallory.token, { content: 'trouble' })
  const onUser = await report(alice, 'user', mallory.id, 'harassment')
  const onPost = await report(carol, 'post', p.id, 'hate')
  const aboutOther = await report(mallory, 'user', carol.id, 'spam')

  const result = await adminJson(['reports', 'resolve', String(onUser), '--action', 'suspend', '--moderator', 'mod_erin', '--note', 'repeated harassment'])
  assert.equal(result.also_resolved, [onPost])
  assert.equal([result.action.action, result.action.target_type, result.action.target_id, result.action.target_username], ['suspend', 'user', mallory.id, 'mallory'])

  const refusedLogin = await login(mallory)
  assert.is(refusedLogin.status, 403)
  assert.is(refusedLogin.body.message, SUSPENDED)
  const refusedToken = await server.request('GET', `${API}/posts/feed`, { token: mallory.token })
  assert.is(refusedToken.status, 403)
  assert.is(refusedToken.body.message, SUSPENDED)
  assert.is((await server.request('GET', `${API}/posts/feed`, { token: alice.token })).status, 200)
  const stillOpen = (await adminJson(['reports', '--open'])).map((r: any) => r.id)
  assert.ok(stillOpen.includes(aboutOther), 'reports BY the suspended user are not resolved by it')

  const again = await admin(['suspend', 'mallory'])
  assert.is(again.code, 1)
  assert.match(again.stderr, /mallory is already suspended/)

  const lifted = await adminJson(['unsuspend', 'MALLORY', '--note', 'appeal accepted', '--moderator', 'mod_erin'])
  assert.is(lifted.user.suspended_at, null)
  assert.is(lifted.action.action, 'unsuspend')
  assert.is((await server.request('GET', `${API}/posts/feed`, { token: mallory.token })).status, 200, 'the same token works again')
  assert.is((await login(mallory)).status, 200)

  const notSuspended = await admin(['unsuspend', String(mallory.id)])
  assert.is(notSuspended.code, 1)
  assert.match(notSuspended.stderr, /mallory is not suspended/)
})

test('suspend and unsuspend directly by username or id; the moderator defaults to the OS user', async () => {
  const trent = await registerUser(server, 'trent')
  const suspended = await admin(['suspend', 'Trent'])
  assert.is(suspended.code, 0, suspended.stderr)
  assert.match(suspended.stdout, /^trent is suspended \(since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)$/m)
  assert.is((await login(trent)).status, 403)
  const unsuspended = await admin(['unsuspend', String(trent.id)])
  assert.is(unsuspended.code, 0, unsuspended.stderr)
  assert.match(unsuspended.stdout, /trent is no longer suspended/)
  assert.is((await login(trent)).status, 200)

  const [latest, previous] = await adminJson(['actions', '--limit', '2'])
  assert.equal([latest.action, previous.action], ['unsuspend', 'suspend'])
  assert.is(latest.moderator, userInfo().username)
  assert.is(latest.report_id, null)
  assert.is(latest.target_username, 'trent')
})

test('admin actions lists the whole record, newest first, as a table or --json', async () => {
  const actions = await adminJson(['actions', '--limit', '1000'])
  // The earlier tests took, in order: dismiss ×2, remove ×3, suspend, unsuspend, suspend, unsuspend.
  assert.equal(actions.map((a: any) => a.action).reverse(), ['dismiss', 'dismiss', 'remove', 'remove', 'remove', 'suspend', 'unsuspend', 'suspend', 'unsuspend'])
  const ids = actions.map((a: any) => a.id)
  assert.equal(ids, [...ids].sort((x: number, y: number) => y - x))
  assert.ok(actions.every((a: any) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(a.created_at) && a.moderator))
  const scam = actions.find((a: any) => a.note === 'scam')
  assert.equal([scam.action, scam.moderator, scam.target_type], ['remove', 'mod_dana', 'post'])

  const table = await admin(['actions'])
  assert.is(table.code, 0, table.stderr)
  const lines = table.stdout.trim().split('\n')
  assert.match(lines[0], /^ID\s+WHEN\s+MODERATOR\s+ACTION\s+TARGET\s+REPORT\s+NOTE$/)
  assert.is(lines.length, actions.length + 1)
  assert.match(table.stdout, /mod_erin\s+suspend\s+user \d+ \(@mallory\)\s+#\d+\s+repeated harassment/)
})

test('bad input: unknown report or user exit 1, malformed ids, actions and flags exit 2, no database exit 1', async () => {
  const cases: Array<[string[], number, RegExp]> = [
    [['reports', 'resolve', '999999', '--action', 'dismiss'], 1, /no report with id 999999/],
    [['reports', 'resolve', 'abc', '--action', 'dismiss'], 2, /report ID must be a positive whole number/],
    [['reports', 'resolve', '0', '--action', 'dismiss'], 2, /report ID must be a positive whole number/],
    [['reports', 'resolve', '1'], 2, /action/],
    [['reports', 'resolve', '1', '--action', 'nuke'], 2, /dismiss, remove, suspend/],
    [['reports', 'resolve', '1', '--action', 'dismiss', '--moderator', ' '], 2, /moderator must not be empty/],
    [['reports', 'resolve', '1', '--action', 'dismiss', '--note', 'x'.repeat(1001)], 2, /note must be at most 1000 characters/],
    [['reports', '--limit', '0'], 2, /limit/],
    [['reports', '--limit', 'abc'], 2, /limit|integer/i],
    [['suspend', 'nobody_here'], 1, /no user named "nobody_here"/],
    [['unsuspend', '999999'], 1, /no user with id 999999/],
    [['suspend'], 2, /user/i],
    [['actions', '--limit', '-3'], 2, /limit/],
  ]
  const before = await adminJson(['actions', '--limit', '1000'])
  for (const [args, code, message] of cases) {
    const run = await admin(args)
    assert.is(run.code, code, `plaza admin ${args.join(' ')}: ${run.stderr}`)
    assert.match(run.stderr, message, args.join(' '))
    assert.not.match(run.stderr, /at .*\.js:\d+/, 'no stack trace')
  }
  assert.equal(await adminJson(['actions', '--limit', '1000']), before, 'nothing was recorded')
  const empty = tempDir()
  try {
    const missing = await runCli(['admin', 'reports', '--data-dir', empty])
    assert.is(missing.code, 1)
    assert.match(missing.stderr, /no Plaza database/)
    assert.not.ok(existsSync(`${empty}/plaza.db`), 'nothing was created')
  } finally {
    rmSync(empty, { recursive: true, force: true })
  }
})

test('the lists are served by their indexes', async () => {
  const plan = async (query: ReturnType<typeof sql>) =>
    (await server.services.db.all<{ detail: string }>(sql`explain query plan ${query}`)).map((row) => row.detail).join('\n')
  const open = await plan(reportsQuery({ open: true, limit: 50 }))
  assert.match(open, /reports_status_idx/)
  assert.not.match(open, /TEMP B-TREE/)
  const all = await plan(reportsQuery({ open: false, limit: 50 }))
  // Without a filter, the primary key backwards: no sort, and the scan stops after `limit` rows.
  assert.match(all, /^SCAN r$/m)
  assert.not.match(all, /TEMP B-TREE/)
  const record = await plan(actionsQuery(50))
  assert.match(record, /moderation_actions_created_idx/)
  assert.not.match(record, /TEMP B-TREE/)
})

test('plaza social report: remote by username, the API answer with --json; a second report exits 1; bad reason exits 2', async () => {
  const target = await registerUser(server, 'cli_target')
  const reporter = shell({ url: server.url })
  const registered = await reporter.json(['social', 'register', '--username', 'cli_reporter', '--email', 'cli_reporter@example.com', '--password-stdin'], { input: 'correct horse battery\n' })
  const made = await reporter.json(['social', 'report', 'user', 'cli_target', '--reason', 'harassment', '--note', 'keeps messaging me'])
  assert.equal({ ...made.report, id: 0, created_at: '' }, { id: 0, target_type: 'user', target_id: target.id, reason: 'harassment', note: 'keeps messaging me', status: 'open', created_at: '' })
  const listed = (await adminJson(['reports', '--open'])).find((r: any) => r.id === made.report.id)
  assert.is(listed.reporter_id, registered.user.id)

  const twice = await reporter.run(['social', 'report', 'user', String(target.id), '--reason', 'spam'])
  assert.is(twice.code, 1)
  assert.match(twice.stderr, /already reported this/)
  const badReason = await reporter.run(['social', 'report', 'post', '1', '--reason', 'boring'])
  assert.is(badReason.code, 2)
  const badId = await reporter.run(['social', 'report', 'post', 'abc', '--reason', 'spam'])
  assert.is(badId.code, 2)
  assert.match(badId.stderr, /post id must be a number/)
  const human = await reporter.run(['social', 'report', 'post', String((await post(server, target.token, { content: 'x' })).id), '--reason', 'spam'])
  assert.is(human.code, 0, human.stderr)
  assert.match(human.stdout, /^reported post \d+ \(spam\) · report \d+ is open$/m)
  rmSync(reporter.configHome, { recursive: true, force: true })
})

test('embedded, a suspended user\'s session is refused too, uploads included', async () => {
  const local = shell({ dataDir })
  await local.json(['social', 'register', '--username', 'embedded_eve', '--email', 'embedded_eve@example.com', '--password-stdin'], { input: 'correct horse battery\n' })
  assert.is((await local.run(['social', 'post', 'create', 'before'])).code, 0)
  assert.is((await admin(['suspend', 'embedded_eve'])).code, 0)
  const refused = await local.run(['social', 'post', 'create', 'after'])
  assert.is(refused.code, 1)
  assert.match(refused.stderr, /This account has been suspended/)
  const image = await writePng(local.configHome)
  const upload = await local.run(['social', 'upload', 'post', image])
  assert.is(upload.code, 1)
  assert.match(upload.stderr, /This account has been suspended/)
  assert.is((await admin(['unsuspend', 'embedded_eve'])).code, 0)
  assert.is((await local.run(['social', 'upload', 'post', image])).code, 0)
  rmSync(local.configHome, { recursive: true, force: true })
})

test.run()
