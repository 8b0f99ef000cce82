/**
 * Other languages, through a Piston-protocol provider (`PLAZA_PISTON_BASE_URL`, optional
 * `PLAZA_PISTON_API_KEY`): POST /api/v2/execute with one file, its answer read into Plaza's shape.
 */
import { TRPCError } from '@trpc/server'
import type { ExecuteRequest } from '../../../../shared/schemas/execute.js'
import type { SandboxResult } from './job.js'

/** The provider compiles and runs; give it a little longer than its own default limits (3 s compile, 3 s run). */
const UPSTREAM_TIMEOUT_MS = 30_000

interface PistonStage {
  stdout?: string
  stderr?: string
  code?: number | null
  signal?: string | null
  status?: string | null
}

export interface PistonProvider {
  baseUrl: string
  apiKey?: string
}

export function pistonFromEnv(env: NodeJS.ProcessEnv): PistonProvider | null {
  const baseUrl = env.PLAZA_PISTON_BASE_URL?.trim()
  return baseUrl ? { baseUrl: baseUrl.replace(/\/+$/, ''), apiKey: env.PLAZA_PISTON_API_KEY?.trim() || undefined } : null
}

const exitOf = (stage: PistonStage) => (typeof stage.code === 'number' ? stage.code : stage.signal ? 137 : 1)

export async function runOnPiston(provider: PistonProvider | null, request: ExecuteRequest): Promise<SandboxResult> {
  if (!provider) {
    throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: `${request.language} runs through a Piston provider, and none is configured: set PLAZA_PISTON_BASE_URL` })
  }
  const started = performance.now()
  let response: Response
  try {
    response = await fetch(`${provider.baseUrl}/api/v2/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(provider.apiKey ? { authorization: provider.apiKey } : {}) },
      body: JSON.stringify({ language: request.language, version: '*', files: [{ content: request.code }], stdin: request.stdin ?? '' }),
      signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS),
    })
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError'
    throw new TRPCError({ code: timedOut ? 'GATEWAY_TIMEOUT' : 'BAD_GATEWAY', message: timedOut ? 'The Piston provider did not answer in time' : 'The Piston provider could not be reached' })
  }
  const body = (await response.json().catch(() => null)) as { message?: string; run?: PistonStage; compile?: PistonStage } | null
  // Piston answers 400 for a language or version it has not installed: the caller's to fix.
  if (response.status === 400) throw new TRPCError({ code: 'BAD_REQUEST', message: `The Piston provider refused the program: ${body?.message ?? 'no reason given'}` })
  if (!response.ok || !body?.run) throw new TRPCError({ code: 'BAD_GATEWAY', message: `The Piston provider failed (HTTP ${response.status})` })
  const compile = body.compile
  const compileFailed = compile !== undefined && exitOf(compile) !== 0
  const stage = compileFailed ? compile : body.run
  return {
    stdout: (compile?.stdout ?? '') + (compileFailed ? '' : (body.run.stdout ?? '')),
    stderr: (compile?.stderr ?? '') + (compileFailed ? '' : (body.run.stderr ?? '')),
    exit_code: exitOf(stage),
    timed_out: stage.status === 'TO',
    duration_ms: Math.round(performance.now() - started),
  }
}
