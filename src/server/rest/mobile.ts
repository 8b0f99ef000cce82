/**
 * The social REST API of spec/social-api.md, mounted at /api/mobile. The one place that lists its paths:
 * each row reads like the spec's endpoint table, then names the procedure that serves it.
 */
import type { Route } from './adapter.js'
import { uploadRoutes } from './uploads.js'

export const mobileRoutes: Route[] = [
  // auth
  { method: 'POST', path: '/auth/register', procedure: 'auth.register', status: 201, message: 'Registration successful' },
  { method: 'POST', path: '/auth/login', procedure: 'auth.login', message: 'Login successful' },
  { method: 'POST', path: '/auth/logout', procedure: 'auth.logout', input: () => undefined, message: 'Logged out' },
  { method: 'POST', path: '/auth/refresh', procedure: 'auth.refresh', input: () => undefined, message: 'Token refreshed' },

  // users
  { method: 'GET', path: '/user/profile/:user_id?', procedure: 'users.profile', input: ({ params }) => params },

  // stories
  { method: 'GET', path: '/stories/feed', procedure: 'stories.feed', input: () => undefined },
  { method: 'GET', path: '/stories/view/:story_id', procedure: 'stories.view', input: ({ params }) => params },
  { method: 'POST', path: '/stories/create', procedure: 'stories.create', input: ({ body }) => body, status: 201, message: 'Story created' },

  // notifications
  { method: 'GET', path: '/notifications/list', procedure: 'notifications.list', input: ({ query }) => query },
  { method: 'GET', path: '/notifications/count', procedure: 'notifications.count', input: () => undefined },
  { method: 'PUT', path: '/notifications/mark_read/:notification_id?', procedure: 'notifications.markRead', input: ({ params }) => params },

  // uploads: multipart handler routes (file in field `file`), see rest/uploads.ts
  ...uploadRoutes,
]
