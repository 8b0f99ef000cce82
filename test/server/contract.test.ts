/**
 * The contract of /api/mobile: each route row's `output` (the shape the OpenAPI document
 * publishes) against what the real server answers. One scenario calls every route's success path
 * and parses each answer's `data` with that row's schema; the schemas are strict, so a field
 * added, dropped or retyped without updating schemas/responses.ts fails here. A route added to
 * the table without a summary, an output or a call in the scenario fails too.
 */
import type { inferRouterOutputs } from '@trpc/server'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { z } from 'zod'
import type { Route } from '../../src/server/rest/adapter.js'
import { mobileRoutes } from '../../src/server/rest/mobile.js'
import type { AppRouter } from '../../src/server/router.js'
import { totpCodeAt } from '../../src/server/auth/totp.js'
import * as push from '../../src/shared/schemas/push.js'
import * as data from '../../src/shared/schemas/responses.js'
import * as security from '../../src/shared/schemas/security.js'
import { startPushService } from '../helpers/push-service.js'
import { startSmtpServer } from '../helpers/smtp.js'
import { registerUser, startTestServer, type RegisteredUser, type RequestOptions, type TestServer } from '../helpers/server.js'
import { form, recordedVideo, solidImage } from '../uploads/fixtures.js'

const API = '/api/mobile'
/** The rows whose answer is not an envelope (Server-Sent Events, the pages mailed links open), so they have no `data` shape. */
const NOT_ENVELOPES = ['GET /notifications/stream', 'GET /auth/password/reset', 'GET /auth/email/verify']

/**
 * The schema each procedure served on /api/mobile publishes (as its rows name it). Its type is
 * checked against the procedure's real output type: a schema that drifts from what its
 * procedure returns fails `npm run typecheck`, naming the procedure. A test below checks that
 * the rows name these same schemas.
 */
const publishedOutputs = {
  'auth.register': data.session,
  'auth.login': security.loginResult,
  'auth.loginTwoFactor': data.session,
  'auth.forgotPassword': data.nothing,
  'auth.resetPassword': security.passwordReset,
  'auth.verifyEmail': security.emailState,
  'auth.resendVerification': data.nothing,
  'users.email': security.emailState,
  'users.changeEmail': security.emailState,
  'twoFactor.status': security.twoFactorStatus,
  'twoFactor.setup': security.twoFactorSetup,
  'twoFactor.confirm': security.recoveryCodes,
  'twoFactor.disable': security.twoFactorStatus,
  'twoFactor.recoveryCodes': security.recoveryCodes,
  'push.vapidKey': push.vapidKey,
  'push.subscription': push.pushSubscription,
  'push.subscribe': push.pushSubscription,
  'push.update': push.pushSubscription,
  'push.unsubscribe': data.nothing,
  'auth.logout': data.nothing,
  'auth.refresh': data.session,
  'auth.sessions': data.sessionList,
  'auth.revokeSession': data.nothing,
  'users.profile': data.userProfile,
  'users.update': data.userProfile,
  'users.follow': data.userProfile,
  'users.unfollow': data.userProfile,
  'users.followers': data.userPage,
  'users.following': data.userPage,
  'users.block': data.blockState,
  'users.unblock': data.blockState,
  'users.blocked': data.userPage,
  'users.mute': data.muteState,
  'users.unmute': data.muteState,
  'users.muted': data.userPage,
  'users.followRequests': data.userPage,
  'users.approveFollowRequest': data.followRequestResult,
  'users.denyFollowRequest': data.followRequestResult,
  'users.changePassword': data.passwordChanged,
  'users.deleteAccount': data.nothing,
  'posts.feed': data.postPage,
  'posts.explore': data.postPage,
  'posts.detail': data.postDetail,
  'posts.create': data.post,
  'posts.byUser': data.postPage,
  'posts.delete': data.nothing,
  'posts.edit': data.post,
  'posts.bookmark': data.bookmarkState,
  'posts.unbookmark': data.bookmarkState,
  'posts.bookmarks': data.postPage,
  'interactions.like': data.likeState,
  'interactions.unlike': data.likeState,
  'interactions.comment': data.comment,
  'interactions.deleteComment': data.nothing,
  'interactions.replies': data.replyPage,
  'stories.feed': data.storyFeed,
  'stories.view': data.story,
  'stories.create': data.story,
  'stories.delete': data.nothing,
  'search.all': data.searchResults,
  'search.users': data.userSearch,
  'search.hashtags': data.hashtagSearch,
  'search.posts': data.postSearch,
  'search.trending': data.trending,
  'posts.hashtag': data.hashtagPage,
  'notifications.list': data.notificationPage,
  'notifications.count': data.unreadCount,
  'notifications.markRead': data.markedRead,
  'reports.create': data.reportCreated,
}

type Outputs = inferRouterOutputs<AppRouter>
type OutputOf<P> = P extends `${infer R extends keyof Outputs & string}.${infer N}` ? (N extends keyof Outputs[R] ? Outputs[R][N] : never) : never
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type AllTrue<T extends Record<string, true>> = T
// Compile-time only: does not type-check when a procedure's output and its published schema differ.
type OutputsAgree = AllTrue<{ [P in keyof typeof publishedOutputs]: Same<z.output<(typeof publishedOutputs)[P]>, OutputOf<P>> }>

const keyOf = (route: Route) => `${route.method} ${route.path}`

/** The adapter's path matching: `:name` is one segment, a trailing `:name?` an optional one. */
function patternOf(path: string): RegExp {
  const source = path
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.endsWith('?') ? '(?:/[^/]+)?' : segment.startsWith(':') ? '/[^/]+' : `/${segment}`))
    .join('')
  return new RegExp(`^${source}/?$`)
}

const rows = mobileRoutes.map((route) => ({ route, key: keyOf(route), pattern: patternOf(route.path) }))

/** The row that serves a request: the first of the table whose method and path match, as in the adapter. */
function rowFor(method: string, path: string) {
  const row = rows.find((r) => r.route.method === method && r.pattern.test(path.split('?')[0]))
  if (!row) throw new Error(`no route row serves ${method} ${path}`)
  return row
}

/** Calls a route, expects success in the envelope, checks `data` against the row's output, and returns it. */
function client(server: TestServer, visited: Set<string>) {
  return async (method: string, path: string, options: RequestOptions = {}): Promise<any> => {
    const row = rowFor(method, path)
    const res = await server.request(method, API + path, options)
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`)
    assert.equal(Object.keys(res.body).sort(), ['data', 'message', 'status', 'timestamp'], `${method} ${path}: envelope fields`)
    assert.is(res.body.status, 'success')
    assert.ok(Number.isInteger(res.body.timestamp))
    const output = row.route.output
    if (!output) throw new Error(`${row.key} has no output schema`)
    const parsed = output.safeParse(res.body.data)
    if (!parsed.success) assert.unreachable(`${row.key}: data does not match its output schema\n${z.prettifyError(parsed.error)}\n${JSON.stringify(res.body.data)}`)
    visited.add(row.key)
    return res.body.data
  }
}

test('every route row but the event stream and the pages has a summary and an output shape', () => {
  for (const { route, key } of rows) {
    assert.ok(route.summary && route.summary.trim() !== '' && !route.summary.includes('\n'), `${key}: a one-line summary`)
    if (NOT_ENVELOPES.includes(key)) assert.is(route.output, undefined, `${key} answers events or a page, not an envelope`)
    else assert.instance(route.output, z.ZodType, `${key}: an output schema`)
  }
})

test('each procedure row names the schema whose type matches its procedure', () => {
  const served = new Set<string>()
  for (const { route, key } of rows) {
    if (!('procedure' in route)) continue
    served.add(route.procedure)
    assert.ok(route.procedure in publishedOutputs, `${key} (${route.procedure}) is missing from publishedOutputs`)
    assert.is(route.output, publishedOutputs[route.procedure as keyof typeof publishedOutputs], `${key}: output`)
  }
  assert.equal(Object.keys(publishedOutputs).filter((procedure) => !served.has(procedure)), [])
})

test('every route answers the shape its row publishes', async () => {
  // Mail goes to a real SMTP server on loopback, pushes to a stand-in push service (test/helpers/push-service.ts).
  const smtp = await startSmtpServer()
  const pushService = await startPushService()
  const server = await startTestServer({
    env: {
      ...smtp.env,
      PLAZA_FETCH_ALLOW_PRIVATE: '1',
    },
  })
  server.services.config.publicUrl = server.url
  const visited = new Set<string>()
  const api = client(server, visited)
  /** The token of the newest mail to `address`, once the outbox is sent. */
  const mailedToken = async (address: string) => {
    await server.services.delivery.drain()
    const mail = smtp.received.filter((m) => m.to.includes(address)).at(-1)!
    return new URL(/https?:\/\/\S+/.exec(mail.mail.text!)![0]).searchParams.get('token')!
  }
  try {
    // Accounts and sessions
    const registered = await api('POST', '/auth/register', { body: { username: 'alice_c', email: 'alice_c@example.com', password: 'correct horse', full_name: 'Alice' } })
    let alice: RegisteredUser = { token: registered.token, id: registered.user.id, username: 'alice_c' }
    const bob = await registerUser(server, 'bob_c')
    const carol = await registerUser(server, 'carol_c')
    const second = await api('POST', '/auth/login', { body: { email: 'alice_c@example.com', password: 'correct horse' } })
    const refreshed = await api('POST', '/auth/refresh', { token: alice.token })
    alice = { ...alice, token: refreshed.token }
    const { sessions } = await api('GET', '/auth/sessions', { token: alice.token })
    assert.is(sessions.length, 2)
    const other = sessions.find((s: { current: boolean }) => !s.current)
    await api('DELETE', `/auth/sessions/${other.id}`, { token: alice.token })
    assert.is((await server.request('GET', `${API}/auth/sessions`, { token: second.token })).status, 401)

    // Email: the address, a change (pending until verified), a new link, verification; a password reset by mail
    assert.is((await api('GET', '/user/email', { token: alice.token })).email_verified, false)
    assert.is((await api('PUT', '/user/email', { token: alice.token, body: { email: 'alice_c2@example.com', password: 'correct horse' } })).pending_email, 'alice_c2@example.com')
    await api('POST', '/auth/email/resend', { token: alice.token })
    assert.is((await api('POST', '/auth/email/verify', { body: { token: await mailedToken('alice_c2@example.com') } })).email, 'alice_c2@example.com')
    const dave = await registerUser(server, 'dave_c')
    await api('POST', '/auth/password/forgot', { body: { email: 'dave_c' } })
    assert.is((await api('POST', '/auth/password/reset', { body: { token: await mailedToken('dave_c@example.com'), password: 'a new password' } })).revoked_sessions, 1)
    assert.is((await server.request('GET', `${API}/user/profile`, { token: dave.token })).status, 401)

    // Two-factor login: set up, confirm, a login's two steps, new recovery codes, off
    const erin = await registerUser(server, 'erin_c')
    assert.is((await api('GET', '/auth/2fa', { token: erin.token })).enabled, false)
    const { secret } = await api('POST', '/auth/2fa/setup', { token: erin.token, body: { password: 'correct horse' } })
    const { recovery_codes } = await api('POST', '/auth/2fa/confirm', { token: erin.token, body: { code: totpCodeAt(secret, new Date()) } })
    const challenge = await api('POST', '/auth/login', { body: { email: 'erin_c', password: 'correct horse' } })
    assert.is(challenge.two_factor_required, true)
    await api('POST', '/auth/login/2fa', { body: { challenge_token: challenge.challenge_token, recovery_code: recovery_codes[0] } })
    const renewed = await api('POST', '/auth/2fa/recovery_codes', { token: erin.token, body: { password: 'correct horse', recovery_code: recovery_codes[1] } })
    // A recovery code: this step's code was used by the confirmation, and no code works twice.
    await api('POST', '/auth/2fa/disable', { token: erin.token, body: { password: 'correct horse', recovery_code: renewed.recovery_codes[0] } })

    // Web Push: the key, a subscription, a change, the end of it
    await api('GET', '/push/vapid-key')
    await api('POST', '/push/subscription', { token: bob.token, body: { subscription: pushService.subscription() } })
    await api('GET', '/push/subscription', { token: bob.token })
    await api('PUT', '/push/subscription', { token: bob.token, body: { data: { policy: 'follower' } } })
    await api('DELETE', '/push/subscription', { token: bob.token })

    // Uploads: an avatar, images for a post, a comment and a story, and a video for a story (its poster fields)
    const png = await solidImage(64, 48, 'png')
    const avatar = await api('POST', '/upload/avatar', { token: alice.token, raw: form(png, 'me.png', 'image/png') })
    const postImage = await api('POST', '/upload/post', { token: alice.token, raw: form(png, 'post.png', 'image/png') })
    const commentImage = await api('POST', '/upload/comment', { token: bob.token, raw: form(png, 'comment.png', 'image/png') })
    const storyImage = await api('POST', '/upload/story', { token: alice.token, raw: form(png, 'story.png', 'image/png') })
    const storyVideo = await api('POST', '/upload/story', { token: alice.token, raw: form(await recordedVideo('mp4'), 'clip.mp4', 'video/mp4') })
    assert.type(storyVideo.poster_path, 'string')
    assert.is(avatar.poster_path, undefined)

    // Profiles and follows
    const own = await api('GET', '/user/profile', { token: alice.token })
    assert.is(own.avatar, avatar.path)
    assert.is(own.avatar_width, avatar.width)
    await api('GET', `/user/profile/${bob.id}`, { token: alice.token })
    await api('PUT', '/user/update', { token: alice.token, body: { bio: 'Hello' } })
    await api('POST', `/user/follow/${bob.id}`, { token: alice.token })
    await api('POST', `/user/follow/${alice.id}`, { token: bob.token })
    await api('POST', `/user/follow/${carol.id}`, { token: alice.token })
    await api('DELETE', `/user/unfollow/${carol.id}`, { token: alice.token })
    assert.is((await api('GET', `/user/followers/${bob.id}`)).users.length, 1)
    assert.is((await api('GET', `/user/following/${bob.id}`, { token: alice.token })).users.length, 1)
    // A private account: carol asks to follow bob twice (approved, then after an unfollow, denied)
    await api('PUT', '/user/update', { token: bob.token, body: { is_private: true } })
    assert.is((await api('POST', `/user/follow/${bob.id}`, { token: carol.token })).follow_requested, true)
    assert.is((await api('GET', '/user/follow-requests', { token: bob.token })).users.length, 1)
    assert.is((await api('POST', `/user/follow-requests/${carol.id}/approve`, { token: bob.token })).state, 'approved')
    await api('DELETE', `/user/unfollow/${bob.id}`, { token: carol.token })
    await api('POST', `/user/follow/${bob.id}`, { token: carol.token })
    assert.is((await api('POST', `/user/follow-requests/${carol.id}/deny`, { token: bob.token })).state, 'denied')
    await api('PUT', '/user/update', { token: bob.token, body: { is_private: false } })

    // Posts: one with an image, one without, an edit
    const alicePost = await api('POST', '/posts/create', { token: alice.token, body: { content: 'Sunny day #contract', image: postImage.path } })
    const bobPost = await api('POST', '/posts/create', { token: bob.token, body: { content: 'Plain words #contract' } })
    assert.is(bobPost.image_width, null)
    const edited = await api('PUT', `/posts/${bobPost.id}`, { token: bob.token, body: { content: 'Plain words, edited #contract' } })
    assert.type(edited.edited_at, 'string')
    assert.ok((await api('GET', '/posts/feed', { token: alice.token })).posts.length >= 2)
    await api('GET', '/posts/explore')
    await api('GET', `/posts/user/${alice.id}`)
    assert.is((await api('POST', `/posts/${bobPost.id}/bookmark`, { token: alice.token })).bookmarked, true)
    assert.is((await api('GET', '/posts/bookmarks', { token: alice.token })).posts[0].bookmarked, true)
    assert.is((await api('DELETE', `/posts/${bobPost.id}/bookmark`, { token: alice.token })).bookmarked, false)
    await api('POST', `/posts/${bobPost.id}/bookmark`, { token: alice.token })

    // Likes and comments
    await api('POST', `/interactions/like/${alicePost.id}`, { token: bob.token })
    await api('POST', `/interactions/like/${bobPost.id}`, { token: alice.token })
    assert.is((await api('DELETE', `/interactions/unlike/${bobPost.id}`, { token: alice.token })).user_liked, false)
    const comment = await api('POST', `/interactions/comment/${alicePost.id}`, { token: bob.token, body: { content: 'Nice', image: commentImage.path } })
    const reply = await api('POST', `/interactions/comment/${alicePost.id}`, { token: alice.token, body: { content: 'Thanks', parent_id: comment.id } })
    assert.is(reply.parent_id, comment.id)
    const threads = (await api('GET', `/posts/detail/${alicePost.id}`, { token: alice.token })).comments
    assert.equal([threads.length, threads[0].replies_count, threads[0].replies.length], [1, 1, 1])
    assert.is((await api('GET', `/comments/${comment.id}/replies`, { token: bob.token })).replies[0].id, reply.id)

    // Stories: text, image and video
    const bobStory = await api('POST', '/stories/create', { token: bob.token, body: { content_type: 'text', text_content: 'Hi', background_color: '#112233' } })
    await api('POST', '/stories/create', { token: alice.token, body: { content_type: 'image', media_url: storyImage.path } })
    const video = await api('POST', '/stories/create', { token: alice.token, body: { content_type: 'video', media_url: storyVideo.path } })
    assert.type(video.poster_url, 'string')
    assert.is((await api('GET', '/stories/feed', { token: alice.token })).length, 2)
    await api('GET', `/stories/view/${bobStory.id}`, { token: alice.token })

    // Search
    const found = await api('GET', '/search/all?q=contract')
    assert.ok(found.posts.length > 0 && found.hashtags.length > 0)
    await api('GET', '/search/users?q=alice')
    await api('GET', '/search/hashtags?q=contract')
    await api('GET', '/search/posts?q=sunny', { token: bob.token })
    assert.is((await api('GET', '/posts/hashtag/%23Contract', { token: bob.token })).posts.length, 2)
    assert.equal((await api('GET', '/search/trending')).hashtags.map((h: { tag: string }) => h.tag), ['contract'])

    // Notifications: bob has follows, a like, a story view and a reply; alice a follow, a like and a comment on a post with an image
    const bobs = await api('GET', '/notifications/list', { token: bob.token })
    assert.equal(new Set(bobs.notifications.map((n: { type: string }) => n.type)), new Set(['follow', 'like', 'story_view', 'reply']))
    const alices = await api('GET', '/notifications/list?limit=50', { token: alice.token })
    assert.ok(alices.notifications.some((n: { post_image: string | null }) => n.post_image === postImage.path))
    assert.ok((await api('GET', '/notifications/count', { token: alice.token })).count > 0)
    assert.is((await api('PUT', `/notifications/mark_read/${alices.notifications[0].id}`, { token: alice.token })).updated, 1)
    await api('PUT', '/notifications/mark_read', { token: alice.token })

    // Blocks, mutes and a report
    await api('POST', `/user/block/${carol.id}`, { token: alice.token })
    assert.is((await api('GET', '/user/blocked', { token: alice.token })).users.length, 1)
    await api('DELETE', `/user/unblock/${carol.id}`, { token: alice.token })
    await api('POST', `/user/mute/${carol.id}`, { token: alice.token })
    assert.is((await api('GET', '/user/muted', { token: alice.token })).users.length, 1)
    await api('DELETE', `/user/unmute/${carol.id}`, { token: alice.token })
    await api('POST', '/reports', { token: alice.token, body: { target_type: 'post', target_id: bobPost.id, reason: 'spam' } })

    // Removals, the password, the account, logout
    await api('DELETE', `/interactions/comment/${comment.id}`, { token: bob.token })
    await api('DELETE', `/stories/${bobStory.id}`, { token: bob.token })
    await api('DELETE', `/posts/${bobPost.id}`, { token: bob.token })
    assert.is((await api('PUT', '/user/password', { token: alice.token, body: { current_password: 'correct horse', new_password: 'battery staple' } })).revoked_sessions, 0)
    await api('DELETE', '/user/account', { token: carol.token, body: { password: 'correct horse' } })
    await api('POST', '/auth/logout', { token: bob.token })

    const missed = rows.filter((r) => !NOT_ENVELOPES.includes(r.key) && !visited.has(r.key)).map((r) => r.key)
    assert.equal(missed, [], 'every route with a data shape is called by this scenario')
  } finally {
    await server.close()
    await pushService.close()
    await smtp.close()
  }
})

test('the shapes are strict: an extra, a missing or a mistyped field is refused', async () => {
  const server = await startTestServer()
  try {
    const alice = await registerUser(server)
    const created = await client(server, new Set())('POST', '/posts/create', { token: alice.token, body: { content: 'strict' } })
    assert.ok(data.post.safeParse(created).success)
    assert.not.ok(data.post.safeParse({ ...created, secret: 'x' }).success)
    const { edited_at: _dropped, ...missing } = created
    assert.not.ok(data.post.safeParse(missing).success)
    assert.not.ok(data.post.safeParse({ ...created, created_at: new Date().toISOString() }).success)
  } finally {
    await server.close()
  }
})

test.run()
