/** Social API calls the remote-database tests share: a call that must succeed, and waiting for another host's post. */
import * as assert from 'uvu/assert'
import type { RegisteredUser, TestServer } from '../helpers/server.js'

const API = '/api/mobile'

/** `method route` (under /api/mobile) as `user`, which must answer 200 or 201: its `data`. */
export async function ok(server: TestServer, method: string, route: string, user: RegisteredUser, body?: unknown) {
  const res = await server.request(method, API + route, { token: user.token, body })
  assert.ok(res.status === 200 || res.status === 201, `${method} ${route} on ${server.url}: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data
}

/**
 * Whether `postId`, written through another host, shows in `viewer`'s feed on `server` within
 * `attempts` reads (`pauseMs` apart): how a test waits for replication, which it cannot trigger.
 */
export async function untilInFeed(server: TestServer, viewer: RegisteredUser, postId: number, { attempts, pauseMs = 0 }: { attempts: number; pauseMs?: number }): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    const feed = await ok(server, 'GET', '/posts/feed?page=1&limit=5', viewer)
    if (feed.posts.some((item: { id: number }) => item.id === postId)) return true
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs))
  }
  return false
}

/**
 * `user` writes `count` posts through `server`, liking each, and reads every write back on the next
 * request: the post count of its profile, the newest of its posts and of its feed, the like's count
 * and state. What a host whose reads come from a replica must still answer.
 */
export async function assertReadsOwnWrites(server: TestServer, user: RegisteredUser, count: number): Promise<void> {
  for (let i = 1; i <= count; i++) {
    const post = await ok(server, 'POST', '/posts/create', user, { content: `post ${i} read back at once` })
    const profile = await ok(server, 'GET', `/user/profile/${user.id}`, user)
    assert.is((profile.user ?? profile).posts_count, i, `posts_count after post ${i}`)
    const mine = await ok(server, 'GET', `/posts/user/${user.id}?page=1&limit=5`, user)
    assert.is(mine.posts[0]?.id, post.id, `newest of the user's posts after post ${i}`)
    const feed = await ok(server, 'GET', '/posts/feed?page=1&limit=5', user)
    assert.is(feed.posts[0]?.id, post.id, `newest of the feed after post ${i}`)
    await ok(server, 'POST', `/interactions/like/${post.id}`, user)
    const detail = await ok(server, 'GET', `/posts/detail/${post.id}`, user)
    assert.is((detail.post ?? detail).likes_count, 1)
    assert.is((detail.post ?? detail).user_liked, true)
  }
}
