/**
 * The procedures of `appRouter` (router.ts), each sub-router loaded on its first call: what the
 * embedded CLI runs on (src/cli/client.ts). A command makes one or two calls, and importing every
 * router builds every procedure's zod schemas (a tenth of an embedded command's start-up). The
 * server keeps `appRouter`: its REST mount, catalog and metrics read `_def.procedures`, which holds
 * only the routers loaded so far. test/cli/lazy-router.test.ts checks that both have the same procedures.
 */
import { lazy } from '@trpc/server'
import type { AppRouter } from './router.js'
import { router } from './trpc.js'

export const lazyAppRouter = router({
  auth: lazy(() => import('./routers/auth.js').then((m) => m.authRouter)),
  users: lazy(() => import('./routers/users.js').then((m) => m.usersRouter)),
  posts: lazy(() => import('./routers/posts.js').then((m) => m.postsRouter)),
  interactions: lazy(() => import('./routers/interactions.js').then((m) => m.interactionsRouter)),
  search: lazy(() => import('./routers/search.js').then((m) => m.searchRouter)),
  stories: lazy(() => import('./routers/stories.js').then((m) => m.storiesRouter)),
  notifications: lazy(() => import('./routers/notifications.js').then((m) => m.notificationsRouter)),
  reports: lazy(() => import('./routers/reports.js').then((m) => m.reportsRouter)),
  push: lazy(() => import('./routers/push.js').then((m) => m.pushRouter)),
  twoFactor: lazy(() => import('./routers/two-factor.js').then((m) => m.twoFactorRouter)),
  codeimage: lazy(() => import('./routers/codeimage.js').then((m) => m.codeimageRouter)),
}) satisfies Record<keyof AppRouter['_def']['record'], unknown> as unknown as AppRouter
