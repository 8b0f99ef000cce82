import { initTRPC, TRPCError } from '@trpc/server'
import { assertNotSuspended, type AuthUser } from './auth/sessions.js'
import { isWrongPassword, RateLimitedError, toPublicError, type ErrorCases } from './errors.js'
import { unitsFor, type HeavyCost } from './heavy-costs.js'
import type { RateLimitClass, RateLimitVerdict } from './rate-limit.js'
import type { RateLimitListener } from './rate-limit-headers.js'
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
  /** Hears each rate-limit count and refusal, for the answer's RateLimit fields (none when embedded). */
  onRateLimit?: RateLimitListener
}

export interface Meta {
  /** Which rate-limit class every call counts against (default: `default`); `auth` counts failures only (`guardPassword`). */
  rateLimit?: Exclude<RateLimitClass, 'auth'>
  /** Set by the base procedures below, so the OpenAPI document can tell which ones take a bearer token. */
  auth?: 'required' | 'optional'
  /** Error statuses the procedure answers beyond those of its input, token and path (ErrorCases in errors.ts). */
  errors?: ErrorCases
  /**
   * Callable before the account's address is verified when PLAZA_REQUIRE_VERIFIED_EMAIL is on: the
   * account's own upkeep (log out, sessions, the address, the password, deleting it).
   */
  unverified?: 'allowed'
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

/**
 * Counts one call of `cost` units against a rate-limit class; throws 429 (with Retry-After) past
 * the limit. Handler routes call it directly (the REST adapter, for the `heavy` operations).
 */
export async function enforceRateLimit(ctx: Context, kind: RateLimitClass, key: string, cost = 1) {
  const verdict = await ctx.services.limiter?.hit(kind, key, cost)
  if (!verdict) return
  ctx.onRateLimit?.(kind, verdict)
  if (!verdict.allowed) refuse(ctx, kind, verdict)
}

/** A 429 of class `kind`, counted in the metrics' refusals. */
function refuse(ctx: Context, kind: RateLimitClass, verdict: RateLimitVerdict): never {
  ctx.services.metrics?.rateLimited(kind)
  throw new RateLimitedError(verdict.retryAfter)
}

/**
 * Failed authentications (a bad or expired token, a wrong password) from one address, in the
 * `auth` class. Only failures count there, so a few successful logins or registrations from a
 * shared address never lock anyone out.
 */
const failedAuthKey = (ctx: Context) => `failed:ip:${ctx.clientAddress}`

/** Refuses (429) once any of `keys` has used up its failed authentications, before any credential is checked. */
async function refuseGuesser(ctx: Context, keys: string[] = [failedAuthKey(ctx)]) {
  const limiter = ctx.services.limiter
  if (!limiter) return
  for (const key of keys) {
    const verdict = await limiter.peek('auth', key)
    if (verdict.allowed) continue
    // The address's own count is the client's to see; an account's is not reported (it would tell anyone how often it was guessed at).
    ctx.onRateLimit?.('auth', key === keys[0] ? verdict : { ...verdict, remaining: 0 })
    refuse(ctx, 'auth', verdict)
  }
}

/** Counts a failed authentication against the address (reported in the answer's RateLimit fields) and any of `accounts`. */
async function countFailure(ctx: Context, accounts: string[] = []) {
  const limiter = ctx.services.limiter
  if (!limiter) return
  ctx.onRateLimit?.('auth', await limiter.hit('auth', failedAuthKey(ctx)))
  for (const account of accounts) await limiter.hit('auth', account)
}

/**
 * Runs a password check (`check`) under the `auth` class: refused with 429 before the check once
 * the client address or `account` (`account:<id>`, or `login:<name>` for a name no account has)
 * has used up its failed authentications; a wrong password counts against both.
 */
export async function guardPassword<T>(ctx: Context, account: string, check: () => Promise<T>): Promise<T> {
  const accountKey = `failed:${account}`
  await refuseGuesser(ctx, [failedAuthKey(ctx), accountKey])
  try {
    return await check()
  } catch (error) {
    if (isWrongPassword(error)) await countFailure(ctx, [accountKey])
    throw error
  }
}

/** No token needed; counts against the caller's address. */
export const publicProcedure = t.procedure.use(async ({ ctx, meta, next }) => {
  await enforceRateLimit(ctx, meta?.rateLimit ?? 'default', `ip:${ctx.clientAddress}`)
  return next()
})

/**
 * No token needed; a costly call, counted in the `heavy` class against the caller's address by
 * the size of its input as JSON, as the REST adapter counts the catalog's costly operations.
 */
export const heavyProcedure = (cost: HeavyCost) =>
  t.procedure.use(async ({ ctx, getRawInput, next }) => {
    const bytes = Buffer.byteLength(JSON.stringify((await getRawInput()) ?? null) ?? '')
    await enforceRateLimit(ctx, 'heavy', `ip:${ctx.clientAddress}`, unitsFor(cost, bytes))
    return next()
  })

/** What an unverified account is told when PLAZA_REQUIRE_VERIFIED_EMAIL is on. */
export const UNVERIFIED_MESSAGE = 'Confirm your email address first: open the link mailed to you (POST /auth/email/resend sends a new one)'

/** Refuses (403) an account whose address is not verified, when the server requires verified addresses. */
function assertVerified(ctx: Context, user: AuthUser): void {
  if (ctx.services.config.delivery.requireVerifiedEmail && user.emailVerifiedAt === null) throw new TRPCError({ code: 'FORBIDDEN', message: UNVERIFIED_MESSAGE })
}

/**
 * Limits wrong two-factor codes per account (the `account` class, an hour's window), beside each
 * challenge's own tries and the address's `auth` limit: `before` refuses an account past it (429)
 * before a code is checked, `failed` counts a wrong code.
 */
export function codeAttempts(ctx: Context, userId: number): { before(): Promise<void>; failed(): Promise<void> } {
  const key = `2fa:user:${userId}`
  return {
    async before() {
      const verdict = await ctx.services.limiter?.peek('account', key)
      if (verdict && !verdict.allowed) refuse(ctx, 'account', verdict)
    },
    failed: async () => void (await ctx.services.limiter?.hit('account', key)),
  }
}

async function authenticate(ctx: Context): Promise<{ user: AuthUser; sessionId: number } | null> {
  if (!ctx.token) return null
  await refuseGuesser(ctx)
  const session = await ctx.services.sessions.resolve(ctx.token, ctx.services.clock())
  if (!session) {
    await countFailure(ctx)
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
  if (session) assertVerified(ctx, session.user)
  await enforceRateLimit(ctx, meta?.rateLimit ?? 'default', session ? `user:${session.user.id}` : `ip:${ctx.clientAddress}`)
  return next({ ctx: { user: session?.user ?? null, sessionId: session?.sessionId ?? null } })
})

/**
 * The caller behind a required bearer token (401 without a valid one), counted against its rate
 * limit. `authedProcedure` uses it, and so do handler routes (uploads) that are not procedures.
 */
export async function requireSession(ctx: Context, rateLimit: RateLimitClass = 'default', unverified?: 'allowed'): Promise<{ user: AuthUser; sessionId: number }> {
  if (!ctx.token) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Authentication required: send Authorization: Bearer <token>' })
  const session = (await authenticate(ctx))!
  if (unverified !== 'allowed') assertVerified(ctx, session.user)
  await enforceRateLimit(ctx, rateLimit, `user:${session.user.id}`)
  return session
}

/** A valid bearer token is required; the caller is in `ctx.user`. */
export const authedProcedure = t.procedure.meta({ auth: 'required' }).use(async ({ ctx, meta, next }) => {
  const session = await requireSession(ctx, meta?.rateLimit, meta?.unverified)
  return next({ ctx: { user: session.user, sessionId: session.sessionId } })
})
