/**
 * The Open-Meteo protocol: the geocoding API (`/v1/search?name=`) turns a place into coordinates,
 * the forecast API (`/v1/forecast`) gives current conditions and a daily forecast; WMO weather
 * codes are turned into words here.
 */
import { TRPCError } from '@trpc/server'
import type { WeatherAnswer, WeatherInput } from '../../shared/schemas/weather.js'
import type { ErrorCases } from '../errors.js'
import { UpstreamError } from './errors.js'

/** What the weather answers beyond its provider's failures (ErrorCases in errors.ts). */
export const WEATHER_ERRORS: ErrorCases = { 404: 'No place of that name was found' }
import type { Attempt } from './layer.js'

/** WMO weather interpretation codes (WW), as Open-Meteo documents them. */
export const WMO_CODES: Record<number, string> = {
  0: 'Clear sky',
  1: 'Mainly clear',
  2: 'Partly cloudy',
  3: 'Overcast',
  45: 'Fog',
  48: 'Depositing rime fog',
  51: 'Light drizzle',
  53: 'Moderate drizzle',
  55: 'Dense drizzle',
  56: 'Light freezing drizzle',
  57: 'Dense freezing drizzle',
  61: 'Slight rain',
  63: 'Moderate rain',
  65: 'Heavy rain',
  66: 'Light freezing rain',
  67: 'Heavy freezing rain',
  71: 'Slight snowfall',
  73: 'Moderate snowfall',
  75: 'Heavy snowfall',
  77: 'Snow grains',
  80: 'Slight rain showers',
  81: 'Moderate rain showers',
  82: 'Violent rain showers',
  85: 'Slight snow showers',
  86: 'Heavy snow showers',
  95: 'Thunderstorm',
  96: 'Thunderstorm with slight hail',
  99: 'Thunderstorm with heavy hail',
}

export const describeWeatherCode = (code: number): string => WMO_CODES[code] ?? `Unknown weather (WMO code ${code})`

const FORECAST_DAYS = 7
const CURRENT = ['temperature_2m', 'relative_humidity_2m', 'apparent_temperature', 'weather_code', 'wind_speed_10m', 'wind_direction_10m']
const DAILY = ['weather_code', 'temperature_2m_max', 'temperature_2m_min', 'precipitation_sum', 'sunrise', 'sunset']

const UNITS = {
  metric: { temperature: '°C', wind_speed: 'km/h', precipitation: 'mm', humidity: '%', query: {} },
  imperial: { temperature: '°F', wind_speed: 'mph', precipitation: 'inch', humidity: '%', query: { temperature_unit: 'fahrenheit', wind_speed_unit: 'mph', precipitation_unit: 'inch' } },
} as const

/** `"52.52,13.41"`: coordinates given directly, no geocoding. */
function coordinatesOf(location: string): { latitude: number; longitude: number } | null {
  const match = /^\s*(-?\d{1,2}(?:\.\d+)?)\s*,\s*(-?\d{1,3}(?:\.\d+)?)\s*$/.exec(location)
  if (!match) return null
  const latitude = Number(match[1])
  const longitude = Number(match[2])
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) throw new TRPCError({ code: 'BAD_REQUEST', message: 'location: latitude must be from -90 to 90 and longitude from -180 to 180' })
  return { latitude, longitude }
}

/** Open-Meteo's customer API takes its key as the `apikey` query parameter. */
const keyOf = (call: Attempt): Record<string, string> => (call.target.apiKey ? { apikey: call.target.apiKey } : {})

const malformed = (call: Attempt, what: string) => new UpstreamError('protocol', `${call.label} answered a malformed ${what}`)
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)

/** The first geocoding match, or 404. */
async function geocode(call: Attempt, name: string): Promise<WeatherAnswer['location']> {
  const base = call.target.options.geocoding_url ?? call.target.baseUrl
  const query = new URLSearchParams({ name, count: '1', language: 'en', format: 'json', ...keyOf(call) })
  const body = await (await call.request({ method: 'GET', url: `${base}/v1/search?${query}`, headers: { accept: 'application/json' } })).json(1024 * 1024)
  if (!body || typeof body !== 'object' || (body.results !== undefined && !Array.isArray(body.results))) throw malformed(call, 'geocoding answer')
  const place = body.results?.[0]
  if (!place) throw new TRPCError({ code: 'NOT_FOUND', message: `location: no place called "${name}" was found` })
  if (!isNumber(place.latitude) || !isNumber(place.longitude) || typeof place.name !== 'string') throw malformed(call, 'geocoding answer')
  return {
    name: place.name,
    country: typeof place.country === 'string' ? place.country : null,
    latitude: place.latitude,
    longitude: place.longitude,
    timezone: typeof place.timezone === 'string' ? place.timezone : null,
  }
}

/** Current conditions and the 7-day forecast at `input.location`, on one Open-Meteo target. */
export async function openMeteoWeather(call: Attempt, input: WeatherInput): Promise<WeatherAnswer> {
  const coordinates = coordinatesOf(input.location)
  const location = coordinates
    ? { name: `${coordinates.latitude},${coordinates.longitude}`, country: null, ...coordinates, timezone: null }
    : await geocode(call, input.location)
  const units = UNITS[input.units]
  const query = new URLSearchParams({
    latitude: String(location.latitude),
    longitude: String(location.longitude),
    current: CURRENT.join(','),
    daily: DAILY.join(','),
    timezone: location.timezone ?? 'auto',
    forecast_days: String(FORECAST_DAYS),
    ...units.query,
    ...keyOf(call),
  })
  const body = await (await call.request({ method: 'GET', url: `${call.target.baseUrl}/v1/forecast?${query}`, headers: { accept: 'application/json' } })).json(1024 * 1024)
  const current = body?.current
  const daily = body?.daily
  if (!current || !daily || !Array.isArray(daily.time)) throw malformed(call, 'forecast')
  for (const field of CURRENT) if (!isNumber(current[field])) throw malformed(call, `forecast (current.${field})`)
  const days = daily.time.slice(0, FORECAST_DAYS).map((date: unknown, i: number) => {
    const value = (field: string) => daily[field]?.[i]
    for (const field of ['weather_code', 'temperature_2m_max', 'temperature_2m_min']) if (!isNumber(value(field))) throw malformed(call, `forecast (daily.${field})`)
    const code = value('weather_code') as number
    return {
      date: String(date),
      min: value('temperature_2m_min') as number,
      max: value('temperature_2m_max') as number,
      precipitation: isNumber(value('precipitation_sum')) ? (value('precipitation_sum') as number) : 0,
      code,
      description: describeWeatherCode(code),
      sunrise: String(value('sunrise') ?? ''),
      sunset: String(value('sunset') ?? ''),
    }
  })
  const code = current.weather_code as number
  const where = [location.name, location.country].filter(Boolean).join(', ')
  const description = describeWeatherCode(code)
  return {
    message: `${where}: ${description.toLowerCase()}, ${Math.round(current.temperature_2m)}${units.temperature}`,
    location: { ...location, timezone: location.timezone ?? (typeof body.timezone === 'string' ? body.timezone : null) },
    units: { system: input.units, temperature: units.temperature, wind_speed: units.wind_speed, precipitation: units.precipitation, humidity: units.humidity },
    current: {
      temperature: current.temperature_2m,
      feels_like: current.apparent_temperature,
      humidity: current.relative_humidity_2m,
      wind_speed: current.wind_speed_10m,
      wind_direction: current.wind_direction_10m,
      code,
      description,
      time: String(current.time ?? ''),
    },
    daily: days,
  }
}
