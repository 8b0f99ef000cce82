/**
 * Per-deployment health (a deployment is one provider and upstream model), as LiteLLM's
 * `allowed_fails` / `cooldown_time`: a deployment that fails `allowedFails` times within
 * `failWindowMs` is skipped for `cooldownMs`, so its route goes straight to its fallbacks instead
 * of paying for timeouts and retries on every call. Kept in this process's memory.
 */
import type { RouterPolicy, Target } from './config.js'
import type { UpstreamError } from './errors.js'

interface DeploymentHealth {
  coolingDown(target: Target, now: number): boolean
  /** Notes a failed call; true when it has just put the deployment into cooldown. */
  failed(target: Target, error: UpstreamError, now: number): boolean
}

/**
 * Failures that say the deployment is unwell, not that the request was bad: no answer, a timeout,
 * an unreadable answer, 5xx, 429, and the statuses of a broken setup (bad key, unknown model).
 * A 400 (context too long, a bad field) would fail on any deployment and says nothing about this one.
 */
function countsAgainst(error: UpstreamError): boolean {
  if (error.kind !== 'http' || error.status === undefined) return true
  return error.status >= 500 || [401, 403, 404, 408, 429].includes(error.status)
}

const deploymentOf = (target: Target) => JSON.stringify([target.provider.name, target.model])

export function createDeploymentHealth(policy: RouterPolicy): DeploymentHealth {
  const states = new Map<string, { failures: number[]; coolUntil: number }>()
  return {
    coolingDown(target, now) {
      const state = states.get(deploymentOf(target))
      return state !== undefined && now < state.coolUntil
    },
    failed(target, error, now) {
      if (policy.cooldownMs === 0 || !countsAgainst(error)) return false
      const id = deploymentOf(target)
      let state = states.get(id)
      if (!state) states.set(id, (state = { failures: [], coolUntil: 0 }))
      state.failures = state.failures.filter((at) => now - at < policy.failWindowMs)
      state.failures.push(now)
      if (state.failures.length < policy.allowedFails) return false
      // A fresh count once the cooldown ends.
      state.failures = []
      state.coolUntil = now + policy.cooldownMs
      return true
    },
  }
}
