/** `GET /api/weather` (docs/weather.md): the query validated, then the weather provider's targets in order. */
import { weatherInput, type WeatherAnswer, type WeatherInput } from '../../../shared/schemas/weather.js'
import { closedSignal, sendJson } from '../../http.js'
import { providerLayerOf, type ProviderLayer } from '../../providers/layer.js'
import { openMeteoWeather } from '../../providers/open-meteo.js'
import type { Exchange } from '../../rest/adapter.js'
import { enforceRateLimit } from '../../trpc.js'

/** The weather at a place through the configured provider(s); shared by the handler and `plaza util weather` (embedded). */
export async function getWeather(layer: ProviderLayer, input: WeatherInput, signal?: AbortSignal): Promise<WeatherAnswer> {
  const { value } = await layer.call('weather', (call) => openMeteoWeather(call, input), signal)
  return value
}

export async function handleWeather(exchange: Exchange): Promise<void> {
  const { ctx, query, res } = exchange
  await enforceRateLimit(ctx, 'default', `ip:${ctx.clientAddress}`)
  const input = weatherInput.parse(query)
  sendJson(res, 200, await getWeather(await providerLayerOf(ctx.services), input, closedSignal(res)))
}
