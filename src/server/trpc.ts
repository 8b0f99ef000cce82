import { initTRPC, TRPCError } from '@trpc/server'
import { assertNotSuspended, type AuthUser } from './auth/sessions.js'
import { RateLimitedError, toPublicError, type ErrorCases } from './errors.js'
import type { RateLimitClass } from './rate-limit.js'
import type { Services } from './services.js'

/** Per-call context: the process's services plus what the caller presented. */
export interface Context {
  services: Services
  /** The bearer token, if any was presented. */
  token: string | null
  /** Client address for per-address rate limits ('local' when embedded). */
  clientAddress: string
  /** Base for absolute URLs in answers: PLAZA_PUBLIC_URL or the request's own origin. */
  origin: string
  /** The client's User-Agent (recorded on the sessions it opens); `plaza-cli/<version>` when embedded. */
  userAgent: string
}

export interface Meta {
  /** Which rate-limit class the procedure counts against (default: `default`). */
  rateLimit?: RateLimitClass
  /** Set by the base procedures below, so the OpenAPI document can tell which ones take a bearer token. */
  auth?: 'required' | 'optional'
  /** Error statuses the procedure answers beyond those of its input, token and path (ErrorCases in errors.ts). */
  errors?: ErrorCases
}

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    errorFormatter({ shape, error }) {
      const { message, status } = toPublicError(error)
      return { ...shape, message, data: { code: shape.data.code, httpStatus: status, path: shape.data.path } }
    },
  })

export const router = t.router
export const createCallerFactory = t.createCallerFactory

/** Counts one call against a rate-limit class; throws 429 (with Retry-After) past the limit. Handler routes call it directly. */
export async function enforceRateLimit(ctx: Context, kind: RateLimitClass, key: string) {
  const verdict = await ctx.services.limiter?.hit(kind, key)
  if (verdict && !verdict.allowed) refuse(ctx, kind, verdict.retryAfter)
}

/** A 429 of class `kind`, counted in the metrics' refusals. */
function refuse(ctx: Context, kind: RateLimitClass, retryAfter: number): never {
  ctx.services.metrics?.rateLimited(kind)
  throw new RateLimitedError(retryAfter)
}

/**
 * Failed authentications (a bad or expired token, a wrong password) from one address, in the
 * `auth` class. Kept apart from the address's count of calls to the authentication endpoints so
 * that a few successful logins from a shared address never lock its signed-in users out.
 */
const failedAuthKey = (ctx: Context) => `failed:ip:${ctx.clientAddress}`

/** Refuses (429) an address that has used up its failed authentications, before any credential is checked. */
async function refuseGuesser(ctx: Context) {
  const verdict = await ctx.services.limiter?.peek('auth', failedAuthKey(ctx))
  if (verdict && !verdict.allowed) refuse(ctx, 'auth', verdict.retryAfter)
}

/** No token needed; counts against the caller's address. Authentication endpoints also count their failures. */
export const publicProcedure = t.procedure.use(async ({ ctx, meta, next }) => {
  const kind = meta?.rateLimit ?? 'default'
  if (kind === 'auth') await refuseGuesser(ctx)
  await enforceRateLimit(ctx, kind, `ip:${ctx.clientAddress}`)
  const result = await next()
  if (kind === 'auth' && !result.ok && result.error.code === 'UNAUTHORIZED') await enforceRateLimit(ctx, 'auth', failedAuthKey(ctx))
  return result
})

async function authenticate(ctx: Context): Promise<{ user: AuthUser; sessionId: number } | null> {
  if (!ctx.token) return null
  await refuseGuesser(ctx)
  const session = await ctx.services.sessions.resolve(ctx.token, ctx.services.clock())
  if (!session) {
    await enforceRateLimit(ctx, 'auth', failedAuthKey(ctx))
    throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Invalid or expired token' })
  }
  assertNotSuspended(session.user)
  // Bookkeeping only, written in batches off the request (sessions.ts).
  ctx.services.sessionTouches.note(session, ctx.services.clock())
  return session
}

/** A token is optional, but if one is presented it must be valid; the caller (if any) is in `ctx.user`. */
export const optionalAuthProcedure = t.procedure.meta({ auth: 'optional' }).use(async ({ ctx, meta, next }) => {
  const session = await authenticate(ctx)
  await enforceRateLimit(ctx, meta?.rateLimit ?? 'default', session ? `user:${session.user.id}` : `ip:${ctx.clientAddress}`)
  return next({ ctx: { user: session?.user ?? null, sessionId: session?.sessionId ?? null } })
})

/**
 * The caller behind a required bearer token (401 without a valid one), counted against its rate
 * limit. `authedProcedure` uses it, and so do handler routes (uploads) that are not procedures.
 */
export async function requireSession(ctx: Context, rateLimit: RateLimitClass = 'default'): Promise<{ user: AuthUser; sessionId: number }> {
  if (!ctx.token) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Authentication required: send Authorization: Bearer <token>' })
  const session = (await authenticate(ctx))!
  await enforceRateLimit(ctx, rateLimit, `user:${session.user.id}`)
  return session
}

/** A valid bearer token is required; the caller is in `ctx.user`. */
export const authedProcedure = t.procedure.meta({ auth: 'required' }).use(async ({ ctx, meta, next }) => {
  const session = await requireSession(ctx, meta?.rateLimit)
  return next({ ctx: { user: session.user, sessionId: session.sessionId } })
})
