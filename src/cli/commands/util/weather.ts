import { Args, Flags } from '@oclif/core'
import type { WeatherAnswer } from '../../../shared/schemas/weather.js'
import { PlazaCommand } from '../../base.js'

export default class UtilWeather extends PlazaCommand<typeof UtilWeather> {
  static override description = `Current weather and a 7-day forecast of a place (GET /api/weather, Open-Meteo protocol; docs/weather.md).

LOCATION is a place name or "latitude,longitude". With --url the server asks its weather provider; without, the provider of this environment (Open-Meteo's public API unless PLAZA_WEATHER_BASE_URL says otherwise).`
  static override examples = [
    '<%= config.bin %> util weather Berlin',
    '<%= config.bin %> util weather "Paris, France" --units imperial',
    '<%= config.bin %> util weather 64.14,-21.9 --json --url http://127.0.0.1:8080',
  ]
  static override args = {
    location: Args.string({ description: 'place name or latitude,longitude', required: true }),
  }
  static override flags = {
    units: Flags.string({ char: 'u', description: 'metric (default) or imperial', options: ['metric', 'imperial'] }),
  }

  async run(): Promise<WeatherAnswer> {
    const { formatWeather, runWeather } = await import('../../providers.js')
    const answer = await runWeather(this.target, { location: this.args.location, units: this.flags.units })
    this.human(formatWeather(answer))
    return answer
  }
}
