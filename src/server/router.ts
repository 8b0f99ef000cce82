import { authRouter } from './routers/auth.js'
import { usersRouter } from './routers/users.js'
import { postsRouter } from './routers/posts.js'
import { interactionsRouter } from './routers/interactions.js'
import { searchRouter } from './routers/search.js'
import { storiesRouter } from './routers/stories.js'
import { notificationsRouter } from './routers/notifications.js'
import { reportsRouter } from './routers/reports.js'
import { pushRouter } from './routers/push.js'
import { twoFactorRouter } from './routers/two-factor.js'
import { lazy } from '@trpc/server'
import { createCallerFactory, router } from './trpc.js'

export const appRouter = router({
  auth: authRouter,
  users: usersRouter,
  posts: postsRouter,
  interactions: interactionsRouter,
  search: searchRouter,
  stories: storiesRouter,
  notifications: notificationsRouter,
  reports: reportsRouter,
  push: pushRouter,
  twoFactor: twoFactorRouter,
  // Loaded on first use: it pulls in the image pipeline (sharp), which most calls never need.
  codeimage: lazy(() => import('./routers/codeimage.js').then((m) => m.codeimageRouter)),
})

export type AppRouter = typeof appRouter

export const createCaller = createCallerFactory(appRouter)
