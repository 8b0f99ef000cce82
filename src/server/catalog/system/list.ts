/** `GET /api/list?group=&offered=`: every catalog row, offered or not, and whether it is configured here. */
import { catalogListInput, type CatalogListAnswer } from '../../../shared/schemas/catalog.js'
import { ConfigError } from '../../config.js'
import { sendJson } from '../../http.js'
import type { Exchange } from '../../rest/adapter.js'
import type { Services } from '../../services.js'
import { describeListing, listOperations } from '../listing.js'
import type { Operation } from '../registry.js'

/** An invalid chat configuration (found at the first use by an embedded command) serves nothing: not configured. */
async function isGatewayConfigured(services: Services): Promise<boolean> {
  try {
    return (await services.chat()).configured
  } catch (error) {
    if (error instanceof ConfigError || (error as Error)?.constructor?.name === 'ConfigError') return false
    throw error
  }
}

/** The registry passes its own rows, so that this module need not import it (the registry imports this handler). */
export async function handleListOperations({ res, ctx, query }: Exchange, rows: readonly Operation[]): Promise<void> {
  const filter = catalogListInput.parse(query)
  const state = { env: ctx.services.config.env, gatewayConfigured: await isGatewayConfigured(ctx.services) }
  const operations = listOperations(rows, state, filter)
  const answer: CatalogListAnswer = { message: describeListing(operations), operations }
  sendJson(res, 200, answer)
}
