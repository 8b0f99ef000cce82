/** GET /api/v1/usage: the calling key's own usage by UTC day and model (the operator's view is `plaza admin usage`). */
import { gatewayUsageInput } from '../../shared/schemas/gateway-keys.js'
import { sendJson } from '../http.js'
import type { Exchange } from '../rest/adapter.js'
import { GatewayError } from './errors.js'
import { dollars } from './prices.js'
import { authorizeGatewayCall, sendChatError } from './http.js'

export async function handleGetUsage(exchange: Exchange): Promise<void> {
  try {
    const pass = await authorizeGatewayCall(exchange.ctx, exchange.req)
    if (!pass.key) throw new GatewayError(401, 'invalid_api_key', 'This gateway has no keys, and usage is recorded per key: the operator creates one with plaza admin keys create.')
    const { days } = gatewayUsageInput.parse(exchange.query)
    const rows = await (await exchange.ctx.services.gatewayAccess()).usage({ key: pass.key, days })
    const data = rows.map(({ key_id: _id, key_name: _name, cost_nanos, ...row }) => ({ ...row, cost_usd: dollars(cost_nanos) }))
    const total = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cached_tokens: 0, requests: 0, errors: 0 }
    let nanos = 0
    for (const row of rows) {
      for (const field of Object.keys(total) as Array<keyof typeof total>) total[field] += row[field]
      nanos += row.cost_nanos
    }
    sendJson(exchange.res, 200, { object: 'list', key: { id: pass.key.id, name: pass.key.name }, days, data, total: { ...total, cost_usd: dollars(nanos) }, ...pass.quota() })
  } catch (error) {
    sendChatError(exchange, 'openai', error)
  }
}
