import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { DEFAULT_RATE_LIMITS } from '../../src/server/config.js'
import { manualClock, registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { followUser, post, rawClient } from './helpers.js'

const API = '/api/mobile'
const clock = manualClock()
let server: TestServer
test.before(async () => {
  server = await startTestServer({ clock: clock.clock })
})
test.after(async () => {
  await server.close()
})

const report = (token: string | undefined, body: unknown) => server.request('POST', `${API}/reports`, { token, body })

async function storyOf(user: RegisteredUser, privacy_type = 'public'): Promise<number> {
  const res = await server.request('POST', `${API}/stories/create`, { token: user.token, body: { content_type: 'text', text_content: 'look', privacy_type } })
  assert.is(res.status, 201, JSON.stringify(res.body))
  return res.body.data.id
}

async function commentOn(user: RegisteredUser, postId: number): Promise<number> {
  const res = await server.request('POST', `${API}/interactions/comment/${postId}`, { token: user.token, body: { content: 'a comment' } })
  assert.is(res.status, 201)
  return res.body.data.id
}

async function reportRows() {
  const rows = await rawClient(server).execute('select reporter_id, target_type, target_id, target_user_id, reason, note, status from reports order by id')
  return rows.rows.map((r) => ({ ...r }))
}

test('a post report is stored with its author and answered 201 with the report', async () => {
  const author = await registerUser(server)
  const reporter = await registerUser(server)
  const p = await post(server, author.token, { content: 'buy cheap pills' })
  const res = await report(reporter.token, { target_type: 'post', target_id: p.id, reason: 'spam', note: '  link farm  ' })
  assert.is(res.status, 201)
  assert.is(res.body.status, 'success')
  assert.is(res.body.message, 'Report submitted')
  const { report: r } = res.body.data
  assert.equal(Object.keys(r).sort(), ['created_at', 'id', 'note', 'reason', 'status', 'target_id', 'target_type'])
  assert.equal({ ...r, id: 0 }, { id: 0, target_type: 'post', target_id: p.id, reason: 'spam', note: 'link farm', status: 'open', created_at: '2026-01-01 00:00:00' })
  const [row] = await rawClient(server).execute({ sql: 'select reporter_id, target_user_id, status from reports where id = ?', args: [r.id] }).then((x) => x.rows)
  assert.equal({ ...row }, { reporter_id: reporter.id, target_user_id: author.id, status: 'open' })
})

test('comments, stories and users can be reported; target_user_id is whom the report is about; note is optional', async () => {
  const author = await registerUser(server)
  const commenter = await registerUser(server)
  const reporter = await registerUser(server)
  const p = await post(server, author.token, { content: 'fine post' })
  const commentId = await commentOn(commenter, p.id)
  const storyId = await storyOf(author)
  const cases = [
    { target_type: 'comment', target_id: commentId, reason: 'harassment', owner: commenter.id },
    { target_type: 'story', target_id: storyId, reason: 'nudity', owner: author.id },
    { target_type: 'user', target_id: commenter.id, reason: 'hate', owner: commenter.id },
  ]
  for (const { owner, ...body } of cases) {
    const res = await report(reporter.token, { ...body, note: null })
    assert.is(res.status, 201, `${body.target_type}: ${JSON.stringify(res.body)}`)
    assert.is(res.body.data.report.note, '')
    const [row] = (await rawClient(server).execute({ sql: 'select target_user_id from reports where id = ?', args: [res.body.data.report.id] })).rows
    assert.is(row.target_user_id, owner, body.target_type)
  }
})

test('400: unknown type or reason, bad id, long note, reporting yourself or your own content; nothing stored', async () => {
  const me = await registerUser(server)
  const other = await registerUser(server)
  const mine = await post(server, me.token, { content: 'mine' })
  const theirs = await post(server, other.token, { content: 'theirs' })
  const myComment = await commentOn(me, theirs.id)
  const myStory = await storyOf(me)
  const before = (await reportRows()).length
  const cases: Array<[unknown, RegExp]> = [
    [{ target_type: 'photo', target_id: theirs.id, reason: 'spam' }, /target_type must be one of post, comment, story, user/],
    [{ target_type: 'post', target_id: theirs.id, reason: 'boring' }, /reason must be one of spam, harassment/],
    [{ target_type: 'post', target_id: theirs.id }, /reason must be one of/],
    [{ target_type: 'post', target_id: 'abc', reason: 'spam' }, /target_id/],
    [{ target_type: 'post', target_id: 0, reason: 'spam' }, /target_id/],
    [{ target_type: 'post', reason: 'spam' }, /target_id/],
    [{ target_type: 'post', target_id: theirs.id, reason: 'other', note: 'x'.repeat(1001) }, /note must be at most 1000 characters/],
    [{ target_type: 'post', target_id: theirs.id, reason: 'other', note: 42 }, /note must be a string/],
    [{ target_type: 'user', target_id: me.id, reason: 'spam' }, /You cannot report yourself/],
    [{ target_type: 'post', target_id: mine.id, reason: 'spam' }, /You cannot report your own content/],
    [{ target_type: 'comment', target_id: myComment, reason: 'spam' }, /You cannot report your own content/],
    [{ target_type: 'story', target_id: myStory, reason: 'spam' }, /You cannot report your own content/],
  ]
  for (const [body, message] of cases) {
    const res = await report(me.token, body)
    assert.is(res.status, 400, JSON.stringify(body))
    assert.is(res.body.data, null)
    assert.match(res.body.message, message)
  }
  const notJson = await server.request('POST', `${API}/reports`, { token: me.token, raw: '{nope', headers: { 'content-type': 'application/json' } })
  assert.is(notJson.status, 400)
  assert.is((await reportRows()).length, before)
})

test('401 without a token or with a bad one', async () => {
  const author = await registerUser(server)
  const p = await post(server, author.token, { content: 'x' })
  const body = { target_type: 'post', target_id: p.id, reason: 'spam' }
  const none = await report(undefined, body)
  assert.is(none.status, 401)
  assert.is(none.body.data, null)
  assert.is((await report('plz_not-a-real-token', body)).status, 401)
})

test('404 for what does not exist or the reporter may not see, by the rules of reading it', async () => {
  const author = await registerUser(server)
  const follower = await registerUser(server)
  const stranger = await registerUser(server)
  await followUser(server, follower.token, author.id)
  const hidden = await post(server, author.token, { content: 'followers only', is_public: false })
  const hiddenComment = await commentOn(follower, hidden.id)
  const privateStory = await storyOf(author, 'followers')

  const cases: Array<[string, number, string]> = [
    ['post', 99_999_999, 'Post not found'],
    ['post', hidden.id, 'Post not found'],
    ['comment', 99_999_999, 'Comment not found'],
    ['comment', hiddenComment, 'Comment not found'],
    ['story', 99_999_999, 'Story not found'],
    ['story', privateStory, 'Story not found'],
    ['user', 99_999_999, 'User not found'],
  ]
  for (const [target_type, target_id, message] of cases) {
    const res = await report(stranger.token, { target_type, target_id, reason: 'other' })
    assert.is(res.status, 404, `${target_type} ${target_id}`)
    assert.is(res.body.message, message)
  }
  // The follower sees all three, so may report them.
  for (const [target_type, target_id] of [['post', hidden.id], ['story', privateStory]] as const) {
    assert.is((await report(follower.token, { target_type, target_id, reason: 'other' })).status, 201, target_type)
  }
  const otherReader = await registerUser(server)
  await followUser(server, otherReader.token, author.id)
  assert.is((await report(otherReader.token, { target_type: 'comment', target_id: hiddenComment, reason: 'other' })).status, 201)

  // An expired story is gone for reports as for viewing.
  const shortLived = await storyOf(author)
  clock.advance(24 * 3600_000 + 1)
  const expired = await report(stranger.token, { target_type: 'story', target_id: shortLived, reason: 'other' })
  assert.is(expired.status, 404)
})

test('409 for a second open report of the same target by the same reporter; others and other targets are fine', async () => {
  const author = await registerUser(server)
  const reporter = await registerUser(server)
  const second = await registerUser(server)
  const p = await post(server, author.token, { content: 'twice' })
  const body = { target_type: 'post', target_id: p.id, reason: 'spam' }
  assert.is((await report(reporter.token, body)).status, 201)
  const again = await report(reporter.token, { ...body, reason: 'hate', note: 'also hate' })
  assert.is(again.status, 409)
  assert.is(again.body.message, 'You have already reported this; your report is still open')
  assert.is((await report(second.token, body)).status, 201)
  assert.is((await report(reporter.token, { target_type: 'user', target_id: author.id, reason: 'spam' })).status, 201)
  const rows = (await reportRows()).filter((r) => r.target_type === 'post' && r.target_id === p.id)
  assert.is(rows.length, 2)

  // Once the first is resolved, the reporter may report the same target again.
  await rawClient(server).execute({ sql: "update reports set status = 'resolved', resolution = 'dismiss' where reporter_id = ? and target_id = ?", args: [reporter.id, p.id] })
  assert.is((await report(reporter.token, body)).status, 201)
})

test('the tRPC procedure reports.create answers the same report', async () => {
  const author = await registerUser(server)
  const reporter = await registerUser(server)
  const res = await fetch(`${server.url}/trpc/reports.create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${reporter.token}` },
    body: JSON.stringify({ target_type: 'user', target_id: author.id, reason: 'other', note: 'impersonation' }),
  })
  assert.is(res.status, 200)
  const { result } = await res.json()
  assert.is(result.data.report.target_id, author.id)
  assert.is(result.data.report.note, 'impersonation')
})

test('429 past the report class limit (per user, an hour by default), with Retry-After; the next window allows again', async () => {
  const limitedClock = manualClock()
  const limited = await startTestServer({ clock: limitedClock.clock, rateLimits: { ...DEFAULT_RATE_LIMITS, report: { max: 3, windowMs: 3_600_000 } } })
  try {
    assert.equal(DEFAULT_RATE_LIMITS.report, { max: 20, windowMs: 3_600_000 })
    const author = await registerUser(limited)
    const reporter = await registerUser(limited)
    const other = await registerUser(limited)
    const posts = []
    for (let i = 0; i < 5; i++) posts.push((await post(limited, author.token, { content: `post ${i}` })).id)
    const send = (user: RegisteredUser, id: number) => limited.request('POST', `${API}/reports`, { token: user.token, body: { target_type: 'post', target_id: id, reason: 'spam' } })
    for (let i = 0; i < 3; i++) assert.is((await send(reporter, posts[i])).status, 201)
    const refused = await send(reporter, posts[3])
    assert.is(refused.status, 429)
    assert.is(refused.body.data, null)
    assert.is(refused.headers.get('retry-after'), '3600')
    // Per user: someone else still may, and the reporter's other calls are not in this class.
    assert.is((await send(other, posts[3])).status, 201)
    assert.is((await limited.request('GET', `${API}/posts/feed`, { token: reporter.token })).status, 200)
    const [count] = (await rawClient(limited).execute({ sql: 'select count(*) as n from reports where reporter_id = ?', args: [reporter.id] })).rows
    assert.is(count.n, 3)
    limitedClock.advance(3_600_000)
    assert.is((await send(reporter, posts[3])).status, 201)
  } finally {
    await limited.close()
  }
})

test("the sweep of ended windows keeps a report count for its hour while minute classes' rows go", async () => {
  const sweepClock = manualClock()
  const limited = await startTestServer({ clock: sweepClock.clock, rateLimits: DEFAULT_RATE_LIMITS })
  try {
    const limiter = limited.services.limiter!
    const keys = async () => (await rawClient(limited).execute('select key from rate_limits order by key')).rows.map((row) => row.key)
    await limiter.hit('report', 'user:1')
    await limiter.hit('default', 'user:1')
    sweepClock.advance(2 * 60_000)
    await limiter.hit('default', 'user:2')
    assert.equal(await keys(), ['default:user:2', 'report:user:1'])
    for (let i = 0; i < 19; i++) await limiter.hit('report', 'user:1')
    assert.is((await limiter.hit('report', 'user:1')).allowed, false, 'the 21st report in the hour is refused')
    sweepClock.advance(3_600_000)
    await limiter.hit('default', 'user:3')
    assert.equal(await keys(), ['default:user:3'])
  } finally {
    await limited.close()
  }
})

test('PLAZA_RATE_LIMITS reads report=N', async () => {
  const { parseRateLimits } = await import('../../src/server/config.js')
  const limits = parseRateLimits('report=5,default=200')
  assert.ok(limits)
  assert.equal(limits.report, { max: 5, windowMs: 3_600_000 })
  assert.is(limits.default.max, 200)
})

test.run()
