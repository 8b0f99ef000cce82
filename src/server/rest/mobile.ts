/**
 * The social REST API of spec/social-api.md, mounted at /api/mobile. The one place that lists its paths:
 * each row reads like the spec's endpoint table, then names the procedure that serves it.
 */
import type { Route } from './adapter.js'
import { handleNotificationStream } from './notification-stream.js'
import { handleUpload } from './uploads.js'

export const mobileRoutes: Route[] = [
  // auth
  { method: 'POST', path: '/auth/register', procedure: 'auth.register', status: 201, message: 'Registration successful' },
  { method: 'POST', path: '/auth/login', procedure: 'auth.login', message: 'Login successful' },
  { method: 'POST', path: '/auth/logout', procedure: 'auth.logout', input: () => undefined, message: 'Logged out' },
  { method: 'POST', path: '/auth/refresh', procedure: 'auth.refresh', input: () => undefined, message: 'Token refreshed' },
  { method: 'GET', path: '/auth/sessions', procedure: 'auth.sessions', input: () => undefined },
  { method: 'DELETE', path: '/auth/sessions/:id', procedure: 'auth.revokeSession', input: ({ params }) => params, message: 'Session revoked' },

  // users
  { method: 'GET', path: '/user/profile/:user_id?', procedure: 'users.profile', input: ({ params }) => params },
  { method: 'PUT', path: '/user/update', procedure: 'users.update', input: ({ body }) => body, message: 'Profile updated' },
  { method: 'POST', path: '/user/follow/:user_id', procedure: 'users.follow', input: ({ params }) => params, message: 'Followed' },
  { method: 'DELETE', path: '/user/unfollow/:user_id', procedure: 'users.unfollow', input: ({ params }) => params, message: 'Unfollowed' },
  { method: 'GET', path: '/user/followers/:user_id', procedure: 'users.followers' },
  { method: 'GET', path: '/user/following/:user_id', procedure: 'users.following' },
  { method: 'POST', path: '/user/block/:user_id', procedure: 'users.block', input: ({ params }) => params, message: 'Blocked' },
  { method: 'DELETE', path: '/user/unblock/:user_id', procedure: 'users.unblock', input: ({ params }) => params, message: 'Unblocked' },
  { method: 'GET', path: '/user/blocked', procedure: 'users.blocked', input: ({ query }) => query },
  { method: 'POST', path: '/user/mute/:user_id', procedure: 'users.mute', input: ({ params }) => params, message: 'Muted' },
  { method: 'DELETE', path: '/user/unmute/:user_id', procedure: 'users.unmute', input: ({ params }) => params, message: 'Unmuted' },
  { method: 'GET', path: '/user/muted', procedure: 'users.muted', input: ({ query }) => query },
  { method: 'PUT', path: '/user/password', procedure: 'users.changePassword', input: ({ body }) => body, message: 'Password changed' },
  { method: 'DELETE', path: '/user/account', procedure: 'users.deleteAccount', input: ({ body }) => body, deleteWithBody: true, message: 'Account deleted' },

  // posts
  { method: 'GET', path: '/posts/feed', procedure: 'posts.feed', input: ({ query }) => query },
  { method: 'GET', path: '/posts/explore', procedure: 'posts.explore', input: ({ query }) => query },
  { method: 'GET', path: '/posts/detail/:post_id', procedure: 'posts.detail' },
  { method: 'POST', path: '/posts/create', procedure: 'posts.create', input: ({ body }) => body, status: 201, message: 'Post created' },
  { method: 'GET', path: '/posts/user/:user_id', procedure: 'posts.byUser' },
  { method: 'DELETE', path: '/posts/:post_id', procedure: 'posts.delete', input: ({ params }) => params, message: 'Post deleted' },
  { method: 'PUT', path: '/posts/:post_id', procedure: 'posts.edit', input: ({ body, params }) => ({ ...body, ...params }), message: 'Post updated' },

  // interactions
  { method: 'POST', path: '/interactions/like/:post_id', procedure: 'interactions.like', input: ({ params }) => params, message: 'Post liked' },
  { method: 'DELETE', path: '/interactions/unlike/:post_id', procedure: 'interactions.unlike', input: ({ params }) => params, message: 'Post unliked' },
  { method: 'POST', path: '/interactions/comment/:post_id', procedure: 'interactions.comment', input: ({ body, params }) => ({ ...body, ...params }), status: 201, message: 'Comment added' },
  { method: 'DELETE', path: '/interactions/comment/:comment_id', procedure: 'interactions.deleteComment', input: ({ params }) => params, message: 'Comment deleted' },

  // stories
  { method: 'GET', path: '/stories/feed', procedure: 'stories.feed', input: () => undefined },
  { method: 'GET', path: '/stories/view/:story_id', procedure: 'stories.view', input: ({ params }) => params },
  { method: 'POST', path: '/stories/create', procedure: 'stories.create', input: ({ body }) => body, status: 201, message: 'Story created' },
  { method: 'DELETE', path: '/stories/:story_id', procedure: 'stories.delete', input: ({ params }) => params, message: 'Story deleted' },

  // search (GET /search/posts is an extra path; the others are the spec's)
  { method: 'GET', path: '/search/all', procedure: 'search.all', input: ({ query }) => query },
  { method: 'GET', path: '/search/users', procedure: 'search.users', input: ({ query }) => query },
  { method: 'GET', path: '/search/hashtags', procedure: 'search.hashtags', input: ({ query }) => query },
  { method: 'GET', path: '/search/posts', procedure: 'search.posts', input: ({ query }) => query },

  // notifications
  { method: 'GET', path: '/notifications/list', procedure: 'notifications.list', input: ({ query }) => query },
  { method: 'GET', path: '/notifications/count', procedure: 'notifications.count', input: () => undefined },
  { method: 'PUT', path: '/notifications/mark_read/:notification_id?', procedure: 'notifications.markRead', input: ({ params }) => params },
  // Server-Sent Events: notifications as they arrive (Last-Event-ID resumes)
  { method: 'GET', path: '/notifications/stream', handle: handleNotificationStream, auth: 'bearer', answers: 'event-stream', summary: 'Notifications as Server-Sent Events as they arrive (Last-Event-ID or last_event_id resumes)' },

  // reports (issue 13; not in the spec)
  { method: 'POST', path: '/reports', procedure: 'reports.create', input: ({ body }) => body, status: 201, message: 'Report submitted' },

  // uploads: multipart with the file in field `file` (POST /upload/comment is an extra path)
  { method: 'POST', path: '/upload/avatar', handle: handleUpload('avatars'), auth: 'bearer', multipart: 'file', status: 201, summary: 'Upload an avatar (also becomes your avatar)' },
  { method: 'POST', path: '/upload/post', handle: handleUpload('posts'), auth: 'bearer', multipart: 'file', status: 201, summary: 'Upload a post image' },
  { method: 'POST', path: '/upload/story', handle: handleUpload('stories'), auth: 'bearer', multipart: 'file', status: 201, summary: 'Upload a story image or video' },
  { method: 'POST', path: '/upload/comment', handle: handleUpload('comments'), auth: 'bearer', multipart: 'file', status: 201, summary: 'Upload a comment image' },
]
