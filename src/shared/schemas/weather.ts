/** `GET /api/weather` (docs/weather.md): its query and its answer, shared by the server and the CLI. */
import { z } from 'zod'

export const WEATHER_UNITS = ['metric', 'imperial'] as const
export type WeatherUnits = (typeof WEATHER_UNITS)[number]

/** `GET /api/weather?location=&units=metric|imperial`. */
export const weatherInput = z.object({
  location: z
    .string({ error: 'location is required' })
    .trim()
    .min(1, 'location is required')
    .max(200, 'location is longer than 200 characters')
    .describe('a place name (Berlin, "Paris, France") or coordinates as "latitude,longitude"'),
  units: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(WEATHER_UNITS, { error: 'units must be metric or imperial' }))
    .default('metric')
    .describe('metric (°C, km/h, mm; default) or imperial (°F, mph, inch)'),
})
export type WeatherInput = z.output<typeof weatherInput>

export interface WeatherAnswer {
  message: string
  location: { name: string; country: string | null; latitude: number; longitude: number; timezone: string | null }
  units: { system: WeatherUnits; temperature: string; wind_speed: string; precipitation: string; humidity: string }
  current: {
    temperature: number
    feels_like: number
    humidity: number
    wind_speed: number
    wind_direction: number
    code: number
    description: string
    time: string
  }
  daily: Array<{ date: string; min: number; max: number; precipitation: number; code: number; description: string; sunrise: string; sunset: string }>
}
