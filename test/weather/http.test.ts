/**
 * GET /api/weather on the real server against a loopback server speaking Open-Meteo's geocoding
 * and forecast APIs: what a user reads (place, units, current conditions, 7 days in words), what
 * was asked upstream, and every failure in the envelope.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { json, startFakeProviders, type FakeProviders } from '../providers/fake-providers.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

let server: TestServer
let fake: FakeProviders

test.before(async () => {
  fake = await startFakeProviders()
  // The forecast and the geocoding API at two paths of one fake, as the two hosts of Open-Meteo.
  server = await startTestServer({ env: { PLAZA_WEATHER_BASE_URL: `${fake.url}/forecast`, PLAZA_WEATHER_GEOCODING_URL: `${fake.url}/geo/`, PLAZA_WEATHER_TIMEOUT_MS: '2000' } })
})
test.after(async () => {
  await server.close()
  await fake.close()
})
test.before.each(() => void (fake.requests.length = 0))

const weather = (query: string) => server.request('GET', `/api/weather?${query}`)

test('a place by name: geocoded, then its current weather and 7 days, WMO codes in words, metric units', async () => {
  const res = await weather('location=Berlin')
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.location, { name: 'Berlin', country: 'Germany', latitude: 52.52437, longitude: 13.41053, timezone: 'Europe/Berlin' })
  assert.equal(res.body.units, { system: 'metric', temperature: '°C', wind_speed: 'km/h', precipitation: 'mm', humidity: '%' })
  assert.equal(res.body.current, { temperature: 4, feels_like: 1, humidity: 81, wind_speed: 15, wind_direction: 250, code: 63, description: 'Moderate rain', time: '2026-11-23T14:00' })
  assert.is(res.body.message, 'Berlin, Germany: moderate rain, 4°C')
  assert.is(res.body.daily.length, 7)
  assert.equal(res.body.daily[0], { date: '2026-11-23', min: -1, max: 6, precipitation: 0, code: 0, description: 'Clear sky', sunrise: '2026-11-23T07:41', sunset: '2026-11-23T16:02' })
  assert.equal(res.body.daily.map((d: { description: string }) => d.description), ['Clear sky', 'Overcast', 'Slight rain', 'Thunderstorm', 'Slight snowfall', 'Fog', 'Partly cloudy'])
  assert.is(res.body.daily[2].precipitation, 5.1)

  const [geo, forecast] = fake.requests
  assert.is(geo.path, '/geo/v1/search')
  assert.is(geo.query.get('name'), 'Berlin')
  assert.is(forecast.path, '/forecast/v1/forecast')
  assert.is(forecast.query.get('latitude'), '52.52437')
  assert.is(forecast.query.get('longitude'), '13.41053')
  assert.is(forecast.query.get('timezone'), 'Europe/Berlin')
  assert.is(forecast.query.get('forecast_days'), '7')
  assert.ok(forecast.query.get('current')!.split(',').includes('apparent_temperature'))
  assert.is(forecast.query.get('temperature_unit'), null)
})

test('imperial units: Fahrenheit, mph and inches asked upstream and labelled in the answer', async () => {
  const res = await weather('location=reykjavik&units=Imperial')
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.is(res.body.location.name, 'Reykjavík')
  assert.equal(res.body.units, { system: 'imperial', temperature: '°F', wind_speed: 'mph', precipitation: 'inch', humidity: '%' })
  assert.is(res.body.current.temperature, 39)
  assert.is(res.body.current.wind_speed, 9.3)
  assert.is(res.body.daily[0].max, 43)
  const forecast = fake.requests[1]
  assert.is(forecast.query.get('temperature_unit'), 'fahrenheit')
  assert.is(forecast.query.get('wind_speed_unit'), 'mph')
  assert.is(forecast.query.get('precipitation_unit'), 'inch')
})

test('coordinates skip the geocoding', async () => {
  const res = await weather(`location=${encodeURIComponent('48.85, 2.35')}`)
  assert.is(res.status, 200, JSON.stringify(res.body))
  assert.is(fake.requests.length, 1)
  assert.is(fake.requests[0].path, '/forecast/v1/forecast')
  assert.equal([res.body.location.latitude, res.body.location.longitude], [48.85, 2.35])
  assert.is(res.body.location.timezone, 'GMT')
})

test('an unknown place is 404; missing or bad parameters are 400; none of them reach the forecast', async () => {
  const unknown = await weather('location=Atlantis')
  assert.is(unknown.status, 404)
  assert.is(unknown.body.status, 'error')
  assert.match(unknown.body.message, /Atlantis/)
  assert.ok(fake.requests.every((r) => r.path !== '/forecast/v1/forecast'))
  for (const query of ['', 'location=', 'location=Berlin&units=kelvin', `location=${'x'.repeat(201)}`, 'location=95,10']) {
    const res = await weather(query)
    assert.is(res.status, 400, query)
    assert.is(res.body.status, 'error')
  }
  assert.match((await weather('location=Berlin&units=kelvin')).body.message, /metric or imperial/)
})

test('malformed upstream JSON is 502, an upstream 500 retried then 502, both with the upstream named', async () => {
  fake.enqueue(json(200, '{"results": [ oops'))
  const broken = await weather('location=Berlin')
  assert.is(broken.status, 502)
  assert.match(broken.body.message, /weather provider env \(open-meteo\) answered with something that is not JSON/)

  fake.enqueue(json(200, { results: [{ name: 'Berlin', latitude: 'north', longitude: 13 }] }))
  const wrongShape = await weather('location=Berlin')
  assert.is(wrongShape.status, 502)
  assert.match(wrongShape.body.message, /malformed geocoding answer/)

  fake.enqueue(json(500, { reason: 'database down' }), json(500, { reason: 'database down' }), json(500, { reason: 'database down' }))
  const down = await weather('location=Berlin')
  assert.is(down.status, 502)
  assert.match(down.body.message, /answered 500: database down/)
  assert.is(fake.requests.length, 2 + 3)
})

test('/api/list shows the weather operation offered and configured', async () => {
  const res = await server.request('GET', '/api/list?group=weather')
  assert.equal(res.body.operations.map((o: { path: string; offered: boolean; configured: boolean }) => [o.path, o.offered, o.configured]), [['/api/weather', true, true]])
})

test.run()
