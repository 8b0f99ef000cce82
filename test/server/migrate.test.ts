/**
 * The migrations are applied by what is recorded, not by the last journal time: Plaza's journal
 * is out of time order (0004-0011 carry round times ahead of 0012-0013's), and drizzle's `migrate`
 * would skip every migration older than the newest recorded one.
 */
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MIGRATIONS_DIR } from '../../src/server/db/client.js'
import { LocalClient } from '../../src/server/db/local-client.js'
import { applyMigrations } from '../../src/server/db/migrate.js'
import { tempDir } from '../helpers/server.js'

const journal = JSON.parse(readFileSync(path.join(MIGRATIONS_DIR, 'meta/_journal.json'), 'utf8')) as { entries: Array<{ when: number; tag: string }> }
const when = (prefix: string) => journal.entries.find((entry) => entry.tag.startsWith(prefix))!.when

async function withDatabase(fn: (client: LocalClient) => Promise<void>): Promise<void> {
  const dir = tempDir()
  const client = new LocalClient(path.join(dir, 'plaza.db'))
  try {
    await fn(client)
  } finally {
    client.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const tables = async (client: LocalClient, names: string[]) =>
  (await client.execute(`select name from sqlite_master where type = 'table' and name in (${names.map(() => '?').join(', ')}) order by name`, [...names])).rows.map((row) => String(row.name))
const recorded = async (client: LocalClient) => Number((await client.execute('select count(*) as n from __drizzle_migrations')).rows[0].n)

/** Takes migrations back out, as if the database had never been given them. */
async function forget(client: LocalClient, prefixes: string[], drops: string[]): Promise<void> {
  for (const drop of drops) await client.execute(drop)
  for (const prefix of prefixes) await client.execute('delete from __drizzle_migrations where created_at = ?', [when(prefix)])
}

test('the journal is out of time order: the case this migrator exists for', () => {
  assert.ok(when('0011') > when('0012'), '0011 is recorded as newer than 0012')
})

test('a new database gets every migration, once; a current one gets none', async () => {
  await withDatabase(async (client) => {
    assert.is(await applyMigrations(client, MIGRATIONS_DIR), journal.entries.length)
    assert.is(await recorded(client), journal.entries.length)
    assert.is(await applyMigrations(client, MIGRATIONS_DIR), 0)
    assert.is(await recorded(client), journal.entries.length)
  })
})

test('a database that had 0011 before 0012 existed is given 0012, 0013 and what follows', async () => {
  await withDatabase(async (client) => {
    await applyMigrations(client, MIGRATIONS_DIR)
    const later = ['chat_conversations', 'chat_messages', 'gateway_key_minutes', 'timeline_backfills']
    await forget(client, ['0012', '0013', '0014'], later.map((table) => `drop table ${table}`))
    assert.equal(await tables(client, later), [])
    // The newest recorded time is 0011's, past 0012's and 0013's: drizzle's rule would give it only 0014.
    assert.is(await applyMigrations(client, MIGRATIONS_DIR), 3)
    assert.equal(await tables(client, later), later)
    assert.is(await recorded(client), journal.entries.length)
  })
})

test('a migration recorded under its time but another hash (its file edited since) is not applied again', async () => {
  await withDatabase(async (client) => {
    await applyMigrations(client, MIGRATIONS_DIR)
    await client.execute('update __drizzle_migrations set hash = ? where created_at = ?', ['edited', when('0014')])
    // 0013 missing too, so the files are read and compared: only 0013 runs.
    await forget(client, ['0013'], ['drop table gateway_key_minutes'])
    assert.is(await applyMigrations(client, MIGRATIONS_DIR), 1)
    assert.equal(await tables(client, ['gateway_key_minutes', 'timeline_backfills']), ['gateway_key_minutes', 'timeline_backfills'])
  })
})

test('0016 counts each user\'s unread notifications and sets their read-up-to mark below the oldest unread', async () => {
  await withDatabase(async (client) => {
    await applyMigrations(client, MIGRATIONS_DIR)
    // The database as 0015 left it: the partial unread index, no counter columns, no triggers.
    await forget(client, ['0016'], [
      'drop trigger notifications_unread_insert',
      'drop trigger notifications_unread_delete',
      'drop trigger notifications_unread_update',
      'alter table users drop column notifications_unread',
      'alter table users drop column notifications_read_upto',
      'create index notifications_user_unread_idx on notifications (user_id) where is_read = 0',
    ])
    for (const id of [1, 2, 3, 4]) {
      await client.execute(`insert into users (id, username, email, password_hash, created_at) values (?, ?, ?, 'x', 0)`, [id, `u${id}`, `u${id}@example.com`])
    }
    // User 1: read, unread, read, unread. User 2: all read. User 3: all unread. User 4: none.
    const rows: Array<[number, number, number, number]> = [
      [1, 1, 2, 1],
      [2, 1, 3, 0],
      [3, 2, 1, 1],
      [4, 1, 2, 1],
      [5, 3, 1, 0],
      [6, 2, 3, 1],
      [7, 1, 4, 0],
      [8, 3, 2, 0],
    ]
    for (const [id, user, actor, read] of rows) {
      await client.execute(`insert into notifications (id, user_id, actor_id, type, is_read, created_at) values (?, ?, ?, 'follow', ?, 0)`, [id, user, actor, read])
    }
    assert.is(await applyMigrations(client, MIGRATIONS_DIR), 1)
    const users = (await client.execute('select id, notifications_unread, notifications_read_upto from users order by id')).rows.map((row) => [
      Number(row.id),
      Number(row.notifications_unread),
      Number(row.notifications_read_upto),
    ])
    assert.equal(users, [
      [1, 2, 1],
      [2, 0, 6],
      [3, 2, 4],
      [4, 0, 0],
    ])
    const indexes = (await client.execute(`select name from sqlite_master where type = 'index' and name = 'notifications_user_unread_idx'`)).rows
    assert.equal(indexes, [], 'the partial unread index is gone')
    // The triggers keep the counter from here on.
    await client.execute(`insert into notifications (user_id, actor_id, type, created_at) values (4, 1, 'follow', 0)`)
    await client.execute('update notifications set is_read = 1 where id = 2')
    await client.execute('delete from notifications where id = 5')
    const counts = (await client.execute('select notifications_unread as n from users order by id')).rows.map((row) => Number(row.n))
    assert.equal(counts, [1, 0, 1, 1])
  })
})

/** How many migrations came before `tag`. */
const countBefore = (tag: string) => journal.entries.findIndex((entry) => entry.tag.startsWith(tag))

/** A copy of the migrations folder as it was before `tag` was written: its journal ends just before it. */
function migrationsBefore(tag: string): string {
  const folder = path.join(tempDir(), 'migrations')
  cpSync(MIGRATIONS_DIR, folder, { recursive: true })
  const entries = journal.entries.slice(0, journal.entries.findIndex((entry) => entry.tag.startsWith(tag)))
  writeFileSync(path.join(folder, 'meta/_journal.json'), JSON.stringify({ ...journal, entries }))
  return folder
}

test('0017 rebuilds notifications without the actor\'s foreign key and index, keeping rows, ids, the id high-water mark and the counter', async () => {
  await withDatabase(async (client) => {
    assert.is(await applyMigrations(client, migrationsBefore('0017')), countBefore('0017'))
    for (const id of [1, 2, 3]) {
      await client.execute(`insert into users (id, username, email, password_hash, created_at) values (?, ?, ?, 'x', 0)`, [id, `u${id}`, `u${id}@example.com`])
    }
    for (const [user, actor, read] of [[1, 2, 0], [1, 3, 1], [2, 1, 0], [1, 2, 0], [3, 1, 0]]) {
      await client.execute(`insert into notifications (user_id, actor_id, type, is_read, created_at) values (?, ?, 'follow', ?, 0)`, [user, actor, read])
    }
    await client.execute('delete from notifications where id = 5')
    const before = (await client.execute('select * from notifications order by id')).rows.map((row) => ({ ...row }))

    assert.is(await applyMigrations(client, MIGRATIONS_DIR), journal.entries.length - countBefore('0017'))
    assert.equal((await client.execute('select * from notifications order by id')).rows.map((row) => ({ ...row })), before, 'every row as it was')
    const keys = (await client.execute(`select "from" as col from pragma_foreign_key_list('notifications') order by col`)).rows.map((row) => String(row.col))
    assert.equal(keys, ['post_id', 'story_id', 'user_id'], 'no foreign key on actor_id')
    const indexes = (await client.execute(`select name from sqlite_master where type = 'index' and tbl_name = 'notifications' order by name`)).rows.map((row) => String(row.name))
    assert.equal(indexes, ['notifications_post_idx', 'notifications_story_idx', 'notifications_user_page_idx'])
    // Id 5 was deleted before the rebuild: it is never given again.
    const next = await client.execute(`insert into notifications (user_id, actor_id, type, created_at) values (1, 3, 'like', 0) returning id`)
    assert.is(Number(next.rows[0].id), 6)
    // The counter's triggers came back with the table.
    assert.equal((await client.execute('select notifications_unread as n from users order by id')).rows.map((row) => Number(row.n)), [3, 1, 0])
    await client.execute('update notifications set is_read = 1 where user_id = 1')
    await client.execute('delete from notifications where id = 3')
    assert.equal((await client.execute('select notifications_unread as n from users order by id')).rows.map((row) => Number(row.n)), [0, 0, 0])
    // Deleting a user no longer looks for their notifications as an actor.
    await client.execute('delete from users where id = 3')
    assert.is(Number((await client.execute('select count(*) as n from notifications where actor_id = 3')).rows[0].n), 2)
  })
})

test('0018 drops the follows index by follower and time; the rows stay, and whom a user follows is read from the primary key', async () => {
  await withDatabase(async (client) => {
    assert.is(await applyMigrations(client, migrationsBefore('0018')), countBefore('0018'))
    for (const id of [1, 2, 3]) {
      await client.execute(`insert into users (id, username, email, password_hash, created_at) values (?, ?, ?, 'x', 0)`, [id, `u${id}`, `u${id}@example.com`])
    }
    for (const [follower, followee, at] of [[1, 2, 5], [1, 3, 7], [2, 1, 6]]) {
      await client.execute('insert into follows (follower_id, following_id, created_at) values (?, ?, ?)', [follower, followee, at])
    }
    const indexNames = async () => (await client.execute(`select name from sqlite_master where type = 'index' and tbl_name = 'follows' and sql is not null order by name`)).rows.map((row) => String(row.name))
    assert.equal(await indexNames(), ['follows_follower_created_idx', 'follows_following_created_idx'])

    assert.is(await applyMigrations(client, MIGRATIONS_DIR), journal.entries.length - countBefore('0018'))
    assert.equal(await indexNames(), ['follows_following_created_idx'])
    const rows = (await client.execute('select follower_id, following_id, created_at from follows order by follower_id, following_id')).rows.map((row) => Object.values(row).map(Number))
    assert.equal(rows, [[1, 2, 5], [1, 3, 7], [2, 1, 6]])
    const plan = (await client.execute('explain query plan select following_id from follows where follower_id = 1 order by created_at desc')).rows.map((row) => String(row.detail))
    assert.ok(plan.includes('SEARCH follows USING PRIMARY KEY (follower_id=?)'), plan.join('\n'))
  })
})

/** A copy of the migrations folder without `tag`: the folder of a branch that never had it (main before it merged). */
function migrationsWithout(tag: string): string {
  const folder = path.join(tempDir(), 'migrations')
  cpSync(MIGRATIONS_DIR, folder, { recursive: true })
  const entries = journal.entries.filter((entry) => !entry.tag.startsWith(tag))
  writeFileSync(path.join(folder, 'meta/_journal.json'), JSON.stringify({ ...journal, entries }))
  return folder
}

test("0023 copies each upload's record into the media of the posts that show it; an item whose upload is gone, and a post with no image, stay as they were", async () => {
  await withDatabase(async (client) => {
    assert.is(await applyMigrations(client, migrationsBefore('0023')), countBefore('0023'))
    await client.execute(`insert into users (id, username, email, password_hash, created_at) values (1, 'ann', 'ann@example.com', 'x', 0)`)
    for (const [path, mime, width, height, blurhash, poster] of [
      ['uploads/posts/a.jpg', 'image/jpeg', 640, 480, 'LEHV6nWB2yk8', null],
      ['uploads/posts/v.mp4', 'video/mp4', 1280, 720, 'LKO2?U%2Tw=w', 'uploads/posts/v.jpg'],
      ['uploads/posts/lone.webp', 'image/webp', 96, 96, null, null],
    ]) {
      await client.execute({ sql: `insert into uploads (user_id, kind, path, mime, size, width, height, blurhash, poster, created_at) values (1, 'posts', ?, ?, 5, ?, ?, ?, ?, 0)`, args: [path, mime, width, height, blurhash, poster] })
    }
    const post = (id: number, image: string, media: string | null) =>
      client.execute({ sql: `insert into posts (id, user_id, content, image, media, created_at) values (?, 1, 'x', ?, ?, 0)`, args: [id, image, media] })
    await post(1, 'uploads/posts/a.jpg', JSON.stringify([['uploads/posts/a.jpg', 'a cat'], ['uploads/posts/gone.jpg', 'lost'], ['uploads/posts/v.mp4', 'a clip']]))
    await post(2, 'uploads/posts/lone.webp', null)
    await post(3, '', null)
    await post(4, 'uploads/posts/gone.jpg', null)

    assert.is(await applyMigrations(client, MIGRATIONS_DIR), journal.entries.length - countBefore('0023'))
    const media = (await client.execute('select media from posts order by id')).rows.map((row) => (row.media === null ? null : JSON.parse(String(row.media))))
    assert.equal(media, [
      [['uploads/posts/a.jpg', 'a cat', 640, 480, 'LEHV6nWB2yk8', null, 'image/jpeg'], ['uploads/posts/gone.jpg', 'lost'], ['uploads/posts/v.mp4', 'a clip', 1280, 720, 'LKO2?U%2Tw=w', 'uploads/posts/v.jpg', 'video/mp4']],
      [['uploads/posts/lone.webp', '', 96, 96, null, null, 'image/webp']],
      null,
      null,
    ])
  })
})

test('the journal lists the migrations in number order, idx its position, each time its own; each snapshot follows the one before', () => {
  const entries = journal.entries as Array<{ idx: number; when: number; tag: string }>
  const numbers = entries.map((entry) => Number(entry.tag.slice(0, 4)))
  assert.equal(numbers, [...numbers].sort((a, b) => a - b), 'tags in number order')
  assert.equal(entries.map((entry) => entry.idx), entries.map((_, i) => i))
  assert.is(new Set(entries.map((entry) => entry.when)).size, entries.length, 'no two share a time (a time is how a database records one)')
  for (const entry of entries) assert.ok(existsSync(path.join(MIGRATIONS_DIR, `${entry.tag}.sql`)), entry.tag)
  // drizzle-kit generates against the last snapshot: a chain with a fork would make it write a merged branch's tables again.
  const snapshots = entries.map((entry) => JSON.parse(readFileSync(path.join(MIGRATIONS_DIR, `meta/${entry.tag.slice(0, 4)}_snapshot.json`), 'utf8')) as { id: string; prevId: string; tables: Record<string, unknown> })
  for (let i = 1; i < snapshots.length; i++) assert.is(snapshots[i].prevId, snapshots[i - 1].id, `${entries[i].tag} follows ${entries[i - 1].tag}`)
  const last = snapshots[snapshots.length - 1]
  for (const table of ['push_subscriptions', 'push_deliveries', 'mail_outbox', 'account_tokens', 'totp_credentials', 'recovery_codes', 'login_challenges', 'instance_keys', 'gateway_responses']) {
    assert.ok(table in last.tables, `the last snapshot has ${table}`)
  }
})

test('a database made before 0019 merged (with 0022, whose time is later) is given 0019 alone: its rows stay, and its triggers work', async () => {
  await withDatabase(async (client) => {
    assert.is(await applyMigrations(client, migrationsWithout('0019')), journal.entries.length - 1)
    assert.ok(when('0022') > when('0019'), 'the newest time recorded is past 0019\'s: drizzle\'s rule would never give it 0019')
    for (const id of [1, 2]) {
      await client.execute(`insert into users (id, username, email, password_hash, created_at) values (?, ?, ?, 'x', 0)`, [id, `u${id}`, `u${id}@example.com`])
    }
    await client.execute(`insert into sessions (id, user_id, token_hash, created_at, expires_at) values (1, 1, 'h', 0, 9e15)`)
    await client.execute(`insert into notifications (user_id, actor_id, type, created_at) values (1, 2, 'follow', 0)`)
    const before = (await client.execute('select id, username, email from users order by id')).rows.map((row) => ({ ...row }))

    assert.is(await applyMigrations(client, MIGRATIONS_DIR), 1)
    assert.is(await recorded(client), journal.entries.length)
    assert.is(await applyMigrations(client, MIGRATIONS_DIR), 0)
    assert.equal((await client.execute('select id, username, email from users order by id')).rows.map((row) => ({ ...row })), before)
    assert.equal((await client.execute('select email_verified_at, pending_email from users where id = 1')).rows.map((row) => ({ ...row })), [{ email_verified_at: null, pending_email: null }])
    // A subscription, then a notification: the trigger queues its push; a revoked session takes its subscription with it.
    await client.execute(`insert into push_subscriptions (user_id, session_id, endpoint, p256dh, auth, created_at, updated_at) values (1, 1, 'https://push.example/x', 'k', 'a', 0, 0)`)
    await client.execute(`insert into notifications (user_id, actor_id, type, created_at) values (1, 2, 'like', 5)`)
    assert.is(Number((await client.execute('select count(*) as n from push_deliveries')).rows[0].n), 1)
    const epoch = async () => Number((await client.execute('select generation from auth_epoch')).rows[0].generation)
    const generation = await epoch()
    await client.execute('update users set email_verified_at = 1 where id = 1')
    assert.is(await epoch(), generation + 1, 'a verification moves the session cache on')
    await client.execute('update sessions set revoked_at = 1 where id = 1')
    assert.is(Number((await client.execute('select count(*) as n from push_subscriptions')).rows[0].n), 0)
    assert.is(Number((await client.execute('select count(*) as n from push_deliveries')).rows[0].n), 0)
  })
})

test.run()
