/**
 * A moderator's `remove` is one transaction: the deletion, the reports it resolves and its
 * moderation record commit together or not at all. The record is made to fail with a trigger;
 * nothing of the removal may then be left behind, and resolving again completes it.
 */
import { sql } from 'drizzle-orm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { writeTransaction } from '../../src/server/db/client.js'
import { resolveReport } from '../../src/server/domain/moderation.js'
import { deletePost } from '../../src/server/domain/removal.js'
import { registerUser, startTestServer, type RegisteredUser, type TestServer } from '../helpers/server.js'
import { filesOnDisk, solidImage, upload } from '../uploads/fixtures.js'
import { post, rawClient } from './helpers.js'

const API = '/api/mobile'
const by = { moderator: 'mod_dana', note: '' }
let server: TestServer
let author: RegisteredUser
let alice: RegisteredUser

test.before(async () => {
  server = await startTestServer()
  author = await registerUser(server)
  alice = await registerUser(server)
})
test.after(() => server.close())

async function one(sqlText: string, ...args: (number | string)[]): Promise<number> {
  const result = await rawClient(server).execute({ sql: sqlText, args })
  return Number(Object.values(result.rows[0])[0])
}

/** Makes every insert into the moderation record fail until the returned function is called. */
async function failRecord(): Promise<() => Promise<void>> {
  const db = server.services.db
  await writeTransaction(db, (tx) =>
    tx.run(sql.raw(`create trigger record_fails before insert on moderation_actions begin select raise(abort, 'record failed'); end`)),
  )
  return () => writeTransaction(db, (tx) => tx.run(sql.raw('drop trigger record_fails'))).then(() => {})
}

async function report(reporter: RegisteredUser, target_type: string, target_id: number): Promise<number> {
  const res = await server.request('POST', `${API}/reports`, { token: reporter.token, body: { target_type, target_id, reason: 'spam' } })
  assert.is(res.status, 201, JSON.stringify(res.body))
  return res.body.data.report.id
}

const status = (reportId: number) =>
  rawClient(server).execute({ sql: 'select status, resolution from reports where id = ?', args: [reportId] }).then((r) => [r.rows[0].status, r.rows[0].resolution])
const actionsFor = (reportId: number) => one('select count(*) from moderation_actions where report_id = ?', reportId)

test('remove on a post: a failed record leaves the post, its comment, counters, file and reports as they were; resolving again removes and records once', async () => {
  const res = await upload(server, 'post', author.token, await solidImage(24, 24, 'png'), 'p.png', 'image/png')
  assert.is(res.status, 201, JSON.stringify(res.body))
  const image = res.body.data.path as string
  const p = await post(server, author.token, { content: 'atomic removal #atomictag', image })
  const comment = await server.request('POST', `${API}/interactions/comment/${p.id}`, { token: alice.token, body: { content: 'me too' } })
  await server.request('POST', `${API}/interactions/like/${p.id}`, { token: alice.token })
  const onPost = await report(alice, 'post', p.id)
  const onComment = await report(author, 'comment', comment.body.data.id)
  const state = async () => ({
    post: await one('select count(*) from posts where id = ?', p.id),
    likes: await one('select coalesce((select likes_count from posts where id = ?), -1)', p.id),
    comments: await one('select coalesce((select comments_count from posts where id = ?), -1)', p.id),
    commentRows: await one('select count(*) from comments where post_id = ?', p.id),
    postsCount: await one('select posts_count from users where id = ?', author.id),
    tag: await one(`select coalesce((select posts_count from hashtags where tag = 'atomictag'), -1)`),
    file: filesOnDisk(server.dataDir).includes(image),
  })
  const before = await state()
  assert.equal(before, { post: 1, likes: 1, comments: 1, commentRows: 1, postsCount: before.postsCount, tag: 1, file: true })

  const restore = await failRecord()
  try {
    await resolveReport(server.services, onPost, 'remove', by).then(
      () => assert.unreachable('the record was made to fail'),
      (error) => assert.match(String(error?.message ?? error) + String(error?.cause ?? ''), /record failed/),
    )
  } finally {
    await restore()
  }
  assert.equal(await state(), before, 'the deletion rolled back with the record')
  assert.equal(await status(onPost), ['open', null])
  assert.equal(await status(onComment), ['open', null])
  assert.is(await actionsFor(onPost), 0)

  const resolved = await resolveReport(server.services, onPost, 'remove', by)
  assert.equal(resolved.also_resolved, [onComment], "the report on the post's comment is resolved with it")
  assert.equal([resolved.action.action, resolved.action.target_type, resolved.action.target_id], ['remove', 'post', p.id])
  assert.equal(await state(), { post: 0, likes: -1, comments: -1, commentRows: 0, postsCount: before.postsCount - 1, tag: -1, file: false })
  assert.equal(await status(onPost), ['resolved', 'remove'])
  assert.equal(await status(onComment), ['resolved', 'remove'])
  assert.is(await actionsFor(onPost), 1)
})

test('remove on a comment or a story: a failed record leaves the content and the report open', async () => {
  const p = await post(server, alice.token, { content: 'a thread' })
  const comment = await server.request('POST', `${API}/interactions/comment/${p.id}`, { token: author.token, body: { content: 'rude words' } })
  const story = await server.request('POST', `${API}/stories/create`, { token: author.token, body: { content_type: 'text', text_content: 'rude story' } })
  const cases: Array<[string, number, string]> = [
    ['comment', comment.body.data.id, 'select count(*) from comments where id = ?'],
    ['story', story.body.data.id, 'select count(*) from stories where id = ?'],
  ]
  for (const [type, id, exists] of cases) {
    const reportId = await report(alice, type, id)
    const restore = await failRecord()
    try {
      await resolveReport(server.services, reportId, 'remove', by).then(
        () => assert.unreachable(`${type}: the record was made to fail`),
        (error) => assert.match(String(error?.message ?? error) + String(error?.cause ?? ''), /record failed/),
      )
    } finally {
      await restore()
    }
    assert.is(await one(exists, id), 1, `${type} stays`)
    assert.equal(await status(reportId), ['open', null], type)
    if (type === 'comment') assert.is(await one('select comments_count from posts where id = ?', p.id), 1)
    await resolveReport(server.services, reportId, 'remove', by)
    assert.is(await one(exists, id), 0, `${type} is gone`)
    assert.equal(await status(reportId), ['resolved', 'remove'], type)
    assert.is(await actionsFor(reportId), 1, type)
  }
  assert.is(await one('select comments_count from posts where id = ?', p.id), 0)
})

test('remove when the content is already gone still resolves the report and records it', async () => {
  const p = await post(server, author.token, { content: 'removed before the record' })
  const reportId = await report(alice, 'post', p.id)
  // A moderator's deletion leaves the open reports for the caller's record.
  await deletePost(server.services, p.id, { moderator: 'mod_dana' })
  assert.equal(await status(reportId), ['open', null])
  const resolved = await resolveReport(server.services, reportId, 'remove', by)
  assert.equal([resolved.report.status, resolved.report.resolution, resolved.action.action], ['resolved', 'remove', 'remove'])
  assert.is(await actionsFor(reportId), 1)
})

test.run()
