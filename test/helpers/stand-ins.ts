/**
 * Every provider-backed part of Plaza pointed at loopback servers that speak its protocol, for a
 * test that calls every operation (the fuzz test, the examples test): the chat gateway and the
 * second upstream (chat/fake-upstream.ts), images, background removal, weather and speech
 * (providers/fake-providers.ts), web search, clips, lens and song recognition (search/fake-search.ts).
 * They stand in for services on the internet, which a test cannot reach.
 */
import { startFakeUpstream, type FakeUpstream } from '../chat/fake-upstream.js'
import { startFakeProviders, type FakeProviders } from '../providers/fake-providers.js'
import { AUDD_KEY, LENS_KEY, startFakeSearch, type FakeSearch } from '../search/fake-search.js'

export interface StandIns {
  upstream: FakeUpstream
  providers: FakeProviders
  search: FakeSearch
  /** The server's environment that points every provider at its stand-in. */
  env: Record<string, string>
  close(): Promise<void>
}

export async function startStandIns(): Promise<StandIns> {
  const [upstream, providers, search] = await Promise.all([startFakeUpstream(), startFakeProviders(), startFakeSearch()])
  const env = {
    PLAZA_LLM_BASE_URL: `${upstream.url}/v1`,
    PLAZA_LLM_API_KEY: 'sk-stand-in',
    PLAZA_INFERENCE_BASE_URL: `${upstream.url}/v1`,
    PLAZA_IMAGES_BASE_URL: `${providers.url}/v1`,
    PLAZA_REMOVEBG_BASE_URL: providers.url,
    PLAZA_REMOVEBG_PROTOCOL: 'rembg',
    PLAZA_WEATHER_BASE_URL: providers.url,
    PLAZA_WEATHER_GEOCODING_URL: providers.url,
    PLAZA_SPEECH_BASE_URL: `${providers.url}/v1`,
    PLAZA_ELEVENLABS_BASE_URL: providers.url,
    PLAZA_ELEVENLABS_API_KEY: 'xi-stand-in',
    PLAZA_POLLY_BASE_URL: providers.url,
    PLAZA_POLLY_REGION: 'eu-west-1',
    PLAZA_POLLY_ACCESS_KEY_ID: 'AKIDSTANDIN',
    PLAZA_POLLY_SECRET_ACCESS_KEY: 'stand-in-secret',
    PLAZA_AZURE_SPEECH_BASE_URL: providers.url,
    PLAZA_SEARCH_BASE_URL: `${search.url}/searx`,
    PLAZA_CLIPS_BASE_URL: `${search.url}/inv`,
    PLAZA_LENS_BASE_URL: `${search.url}/serp`,
    PLAZA_LENS_API_KEY: LENS_KEY,
    PLAZA_AUDD_BASE_URL: `${search.url}/audd`,
    PLAZA_AUDD_API_KEY: AUDD_KEY,
  }
  return {
    upstream,
    providers,
    search,
    env,
    close: async () => void (await Promise.all([upstream.close(), providers.close(), search.close()])),
  }
}
