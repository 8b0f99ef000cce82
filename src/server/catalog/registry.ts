/**
 * The utility catalog (decisions §6): every operation as a row. The one place a catalog path is
 * named: rest/utility.ts mounts the rows that are offered, `GET /api/list` lists them all, the
 * OpenAPI document describes them and a test checks the README's table against them.
 */
import type { z } from 'zod'
import { catalogListInput, type CatalogGroup } from '../../shared/schemas/catalog.js'
import { chatCompletionInput, chatOperationInput, chatQueryInput, coderInput, conversationInput, modelIdInput } from '../../shared/schemas/chat.js'
import { carbonInput } from '../../shared/schemas/carbon.js'
import { codeImageInput } from '../../shared/schemas/codeimage.js'
import { executeInput } from '../../shared/schemas/execute.js'
import {
  handleChatCompletions,
  handleChatModels,
  handleChatOperation,
  handleChatProviders,
  handleChatQuery,
  handleCoder,
  handleConversation,
  handleGetModel,
  handleInferenceCompletions,
  handleListModels,
} from '../chat/http.js'
import { gatewayUsageInput } from '../../shared/schemas/gateway-keys.js'
import { handleGetUsage } from '../chat/usage-http.js'
// The gateway's other wire formats (docs/chat.md): Responses, Anthropic Messages, embeddings, moderations, audio.
import { audioSpeechInput, audioTranscriptionFields, embeddingsInput, messagesInput, moderationsInput, responseIdInput, responsesInput } from '../../shared/schemas/gateway-apis.js'
import { handleSpeech, handleTranscription } from '../chat/surfaces/audio.js'
import { handleEmbeddings, handleModerations } from '../chat/surfaces/embeddings.js'
import { handleMessages } from '../chat/surfaces/messages.js'
import { handleCreateResponse, handleDeleteResponse, handleGetResponse } from '../chat/surfaces/responses.js'
import { expandFormInput, expandInput, imageFxFormInput, imageFxInput, storeFileInput, upscaleFormInput, upscaleInput } from '../../shared/schemas/imaging.js'
import { handleCodeImage } from '../codeimage/http.js'
import { handleExpand, handleExpandForm, handleImageFx, handleImageFxForm, handleListEffects, handleUpscale, handleUpscaleForm } from './imaging/http.js'
import { handleCarbon } from './maker/carbon.js'
import { handleExecute } from './tools/execute/http.js'
import { mediaInput } from '../../shared/schemas/media.js'
import { handleMedia } from './media/http.js'
import { espeakInput, fliteInput } from '../../shared/schemas/speech.js'
import { handleEspeak, handleEspeakVoices, handleFlite, handleFliteVoices } from './audio/http.js'
import { ESPEAK_OPTIONAL } from './audio/service.js'
import type { OptionalPackage } from './optional-package.js'
import { handleFakepost, handleLogo, handleMeme, handleMemeTemplates } from './maker/http.js'
import { fakepostInput } from '../../shared/schemas/fakepost.js'
import { logoInput } from '../../shared/schemas/logo.js'
import { memeInput } from '../../shared/schemas/meme.js'
import { weatherInput } from '../../shared/schemas/weather.js'
import { handleWeather } from './weather/http.js'
import { imageGenerationsInput, imageSourceInput, imagineInput } from '../../shared/schemas/images.js'
import { handleImageGenerations, handleImagine, handleRemoveBg, handleToAnime, handleZombie } from './images/http.js'
import { docsPageInput, handleDocsPage } from './system/docs-page.js'
import { handleListOperations } from './system/list.js'
import { handleMetricsJson, handleMetricsText } from './system/metrics.js'
import { handleOpenApi } from './system/openapi.js'
import { handleStats } from './system/stats.js'
import { handleUptime } from './system/uptime.js'
import { handleWebsite } from './system/website.js'
import type { HandlerAuth, HandlerRoute, Method } from '../rest/adapter.js'
import { errorCases, type ErrorCases } from '../errors.js'
import { HEAVY_COSTS, type HeavyCost } from '../heavy-costs.js'
// What the operations answer beyond their input and token, declared where it is thrown (ErrorCases in errors.ts).
import { CONVERSATION_ERRORS, GATEWAY_CALL_ERRORS } from '../chat/errors.js'
import { CODE_IMAGE_ERRORS } from '../codeimage/http.js'
import { FETCH_ERRORS, URL_CHECK_ERRORS } from '../fetch-guard.js'
import { METRICS_ERRORS } from '../metrics/access.js'
import { AUDD_ERRORS } from '../providers/audd.js'
import { WEATHER_ERRORS } from '../providers/open-meteo.js'
import { POOL_ERRORS } from '../workers/pool.js'
import { ESPEAK_ERRORS, SPEECH_ERRORS } from './audio/http.js'
import { IMAGE_FILE_ERRORS, IMAGE_SOURCE_ERRORS } from './imaging/source.js'
import { PIXEL_ERRORS } from './imaging/pixels.js'
import { PAGE_ERRORS } from './media/page.js'
import { AUDIO_FILE_ERRORS } from './search/http.js'
import { ONLINE_ERRORS } from './search/service.js'
// The coding agent (POST /api/agent)
import { agentInput } from '../../shared/schemas/agent.js'
import { handleAgent } from './llm/agent-http.js'
// Speech providers (#17): OpenAI-compatible, ElevenLabs, Amazon Polly, Azure AI Speech.
import { azureSpeechInput, elevenlabsInput, openaiSpeechInput, pollyInput } from '../../shared/schemas/speech-providers.js'
import { handleAzureSpeech, handleElevenLabsSpeech, handleOpenAiSpeech, handlePollySpeech } from './audio/provider-http.js'
// search-backed operations (docs/search.md)
import { clipsInput, identifyFormInput, identifyInput, lensInput, onlineInput } from '../../shared/schemas/searchops.js'
import { handleClips, handleIdentify, handleIdentifyForm, handleLens, handleOnline } from './search/http.js'
import { handleStoreFile } from './tools/files.js'

/** Where an operation runs: inside Plaza, at a provider the operator configures, or through the chat gateway. */
export type Backend = 'local' | 'provider' | 'gateway'

/** The groups are listed once, in src/shared (the list's filter and the CLI read them too). */
export type Group = CatalogGroup

export interface Operation {
  group: Group
  /** Null for an operation that is never offered and so has no path. */
  method: Method | null
  /** The full path (`/api/...`, or `/docs`, `/metrics` at the root); null when never offered. */
  path: string | null
  summary: string
  backend: Backend
  /** Serves the operation; a row without one is listed with `offered: false`. */
  handle?: HandlerRoute['handle']
  /** Why a row is never offered (decisions §5). */
  notOffered?: string
  /**
   * What configures a provider-backed operation: its `PLAZA_<NAME>_BASE_URL` name(s), the first
   * configured one serving it. Gateway operations are configured when the chat gateway is.
   */
  providers?: string[]
  /** A provider operation that also answers through the chat gateway (`/api/online`): configured only when both are. */
  needsGateway?: boolean
  /** The request the operation validates: query parameters for GET, the JSON body otherwise. */
  input?: z.ZodType
  /** The multipart form field carrying a file (the POST forms of image operations); the input schema then describes the query. */
  multipart?: string
  /** What it answers by default, for the API reference: JSON, image bytes, audio or a stream. */
  answers?: HandlerRoute['answers']
  /** Where the operation is documented at length, relative to the repository. */
  docs?: string
  /** A local operation's optional package: without it the row is listed `configured: false`, with what to install. */
  optionalPackage?: OptionalPackage
  /** The token the handler takes (HandlerAuth in rest/adapter.ts); gateway operations default to `gateway-key`. */
  auth?: HandlerAuth
  /**
   * Error statuses the handler answers beyond those of its input and token, for the OpenAPI document:
   * the cases of the code it reaches (`IMAGE_SOURCE_ERRORS`, `POOL_ERRORS`, ...). A row naming
   * `providers` answers PROVIDER_ERRORS without saying so.
   */
  errors?: ErrorCases
  /** A costly operation: what a call counts in the `heavy` rate-limit class, per client address (heavy-costs.ts). */
  cost?: HeavyCost
}

/** An image read from `url` (or an upload's path), processed in Plaza's media queue. */
const IMAGE_URL_ERRORS = errorCases(IMAGE_SOURCE_ERRORS, PIXEL_ERRORS, POOL_ERRORS)
/** An uploaded image (multipart `file`), processed in Plaza's media queue. */
const IMAGE_FORM_ERRORS = errorCases(IMAGE_FILE_ERRORS, PIXEL_ERRORS, POOL_ERRORS)
/** A card drawn by the Maker's render pool, with an optional picture read from a URL. */
const CARD_ERRORS = errorCases(IMAGE_SOURCE_ERRORS, POOL_ERRORS)

/** Declares one catalog row (a function so that rows read alike and are type-checked one by one). */
export function defineOperation(operation: Operation): Operation {
  return operation
}

export const catalog: Operation[] = [
  // system
  defineOperation({ group: 'system', method: 'GET', path: '/api/openapi.json', errors: { 304: 'Not modified: the document is the one whose ETag `If-None-Match` holds' }, summary: 'OpenAPI 3.1 document of every REST path (mobile and utility)', backend: 'local', handle: handleOpenApi, docs: 'docs/api-reference.md' }),
  // `:asset` serves the page's script, from a fixed list.
  defineOperation({
    group: 'system',
    method: 'GET',
    path: '/docs/:asset?',
    summary: 'Interactive API reference page',
    backend: 'local',
    handle: handleDocsPage,
    input: docsPageInput,
    answers: 'page',
    errors: { 304: 'Not modified: the page (or file) is the one whose ETag `If-None-Match` holds' },
    docs: 'docs/api-reference.md',
  }),
  defineOperation({ group: 'system', method: 'GET', path: '/api/uptime', summary: 'Server uptime and start time', backend: 'local', handle: handleUptime, docs: 'docs/catalog.md' }),
  defineOperation({ group: 'system', method: 'GET', path: '/api/website', summary: 'Redirect to the website (PLAZA_WEBSITE_URL, default /docs)', backend: 'local', answers: 'redirect', handle: handleWebsite, docs: 'docs/catalog.md' }),
  defineOperation({ group: 'system', method: 'GET', path: '/api/metrics', auth: 'metrics-token', errors: METRICS_ERRORS, summary: 'Metrics report as JSON: requests, errors and latency per route, process and database figures', backend: 'local', handle: handleMetricsJson, docs: 'docs/metrics.md' }),
  defineOperation({ group: 'system', method: 'GET', path: '/metrics', auth: 'metrics-token', errors: METRICS_ERRORS, summary: 'Metrics in the Prometheus text format', backend: 'local', answers: 'text', handle: handleMetricsText, docs: 'docs/metrics.md' }),
  defineOperation({
    group: 'system',
    method: 'GET',
    path: '/api/list',
    summary: 'Every catalog operation, offered or not, and whether it is configured here',
    backend: 'local',
    // The rows are handed over at call time: list.ts does not import this module, which imports it.
    handle: (exchange) => handleListOperations(exchange, catalog),
    input: catalogListInput,
    docs: 'docs/catalog.md',
  }),
  defineOperation({ group: 'system', method: 'GET', path: '/api/stats', auth: 'metrics-token', errors: METRICS_ERRORS, summary: 'Calls, errors, mean and p95 latency per operation, since start and all-time', backend: 'local', handle: handleStats, docs: 'docs/metrics.md' }),

  // Tools
  defineOperation({
    group: 'Tools',
    method: 'POST',
    path: '/api/execute',
    errors: POOL_ERRORS,
    summary: 'Compile and execute code (JavaScript and Python sandboxed in Plaza; other languages via a Piston provider)',
    backend: 'local',
    providers: ['PISTON'],
    handle: handleExecute,
    cost: HEAVY_COSTS.program,
    input: executeInput,
    docs: 'docs/execute.md',
  }),
  // Where a client's local image goes before an operation that takes an uploads/... path (plaza util ... --url).
  defineOperation({
    group: 'Tools',
    method: 'POST',
    path: '/api/files',
    summary: 'Keep an image (multipart `file`) for the operations that take an uploads/... path; it expires like generated files',
    backend: 'local',
    handle: handleStoreFile,
    cost: HEAVY_COSTS.image,
    input: storeFileInput,
    multipart: 'file',
    answers: 'json',
    errors: IMAGE_FORM_ERRORS,
    docs: 'docs/catalog.md',
  }),
  defineOperation({
    group: 'Tools',
    method: 'GET',
    path: '/api/clips',
    summary: 'Video clips matching a search text (Invidious API or YouTube Data API v3)',
    backend: 'provider',
    providers: ['CLIPS'],
    handle: handleClips,
    input: clipsInput,
    answers: 'json',
    docs: 'docs/search.md',
  }),

  // Image
  defineOperation({
    group: 'Image',
    method: 'GET',
    path: '/api/lens',
    errors: URL_CHECK_ERRORS,
    summary: "Content related to an image, from an image-search provider (SerpApi's Google Lens protocol)",
    backend: 'provider',
    providers: ['LENS'],
    handle: handleLens,
    input: lensInput,
    answers: 'json',
    docs: 'docs/search.md',
  }),

  // music
  defineOperation({ group: 'music', method: 'GET', path: '/api/identify', errors: errorCases(URL_CHECK_ERRORS, AUDD_ERRORS), summary: 'Identify a song from audio by URL (AudD protocol)', backend: 'provider', providers: ['AUDD'], handle: handleIdentify, input: identifyInput, answers: 'json', docs: 'docs/search.md' }),
  defineOperation({
    group: 'music',
    method: 'POST',
    path: '/api/identify',
    errors: errorCases(AUDIO_FILE_ERRORS, AUDD_ERRORS),
    summary: 'Identify a song from an uploaded audio file (multipart `file`, AudD protocol)',
    backend: 'provider',
    providers: ['AUDD'],
    handle: handleIdentifyForm,
    input: identifyFormInput,
    multipart: 'file',
    answers: 'json',
    docs: 'docs/search.md',
  }),

  // Image Processing
  defineOperation({ group: 'Image Processing', method: 'GET', path: '/api/imageFx', errors: IMAGE_URL_ERRORS, summary: 'Photo effects from a numbered list (also by name)', backend: 'local', handle: handleImageFx, cost: HEAVY_COSTS.image, input: imageFxInput, answers: 'image', docs: 'docs/imaging.md' }),
  defineOperation({ group: 'Image Processing', method: 'POST', path: '/api/imageFx', errors: IMAGE_FORM_ERRORS, summary: 'Photo effects on an uploaded image (multipart `file`)', backend: 'local', handle: handleImageFxForm, cost: HEAVY_COSTS.image, input: imageFxFormInput, multipart: 'file', answers: 'image', docs: 'docs/imaging.md' }),
  defineOperation({ group: 'Image Processing', method: 'GET', path: '/api/imageFx/effects', summary: 'The numbered list of photo effects', backend: 'local', handle: handleListEffects, docs: 'docs/imaging.md' }),
  defineOperation({ group: 'Image Processing', method: 'GET', path: '/api/diffuser/expand', errors: IMAGE_URL_ERRORS, summary: 'Expand an image to a ratio over a blurred fill (generative fill by an AUTOMATIC1111 or OpenAI images provider when configured)', backend: 'local', handle: handleExpand, cost: HEAVY_COSTS.image, input: expandInput, answers: 'image', docs: 'docs/imaging.md' }),
  defineOperation({ group: 'Image Processing', method: 'POST', path: '/api/diffuser/expand', errors: IMAGE_FORM_ERRORS, summary: 'Expand an uploaded image (multipart `file`) to a ratio over a blurred fill (generative fill as the GET)', backend: 'local', handle: handleExpandForm, cost: HEAVY_COSTS.image, input: expandFormInput, multipart: 'file', answers: 'image', docs: 'docs/imaging.md' }),
  defineOperation({ group: 'Image Processing', method: 'GET', path: '/api/upscale', errors: IMAGE_URL_ERRORS, summary: 'Upscale an image 2x or 4x (AI upscaling through the image provider when configured)', backend: 'local', handle: handleUpscale, cost: HEAVY_COSTS.image, input: upscaleInput, answers: 'image', docs: 'docs/imaging.md' }),
  defineOperation({ group: 'Image Processing', method: 'POST', path: '/api/upscale', errors: IMAGE_FORM_ERRORS, summary: 'Upscale an uploaded image (multipart `file`) 2x or 4x', backend: 'local', handle: handleUpscaleForm, cost: HEAVY_COSTS.image, input: upscaleFormInput, multipart: 'file', answers: 'image', docs: 'docs/imaging.md' }),
  defineOperation({
    group: 'Image Processing',
    method: 'GET',
    path: '/api/removebg',
    errors: IMAGE_SOURCE_ERRORS,
    summary: 'Remove the background of an image (remove.bg or rembg protocol)',
    backend: 'provider',
    providers: ['REMOVEBG'],
    handle: handleRemoveBg,
    input: imageSourceInput,
    answers: 'image',
    docs: 'docs/images.md',
  }),
  defineOperation({
    group: 'Image Processing',
    method: 'GET',
    path: '/api/zombie',
    errors: IMAGE_SOURCE_ERRORS,
    summary: 'A zombie-like version of an image (image-to-image: OpenAI images, AUTOMATIC1111 or hosted-inference protocol)',
    backend: 'provider',
    providers: ['IMAGES'],
    handle: handleZombie,
    input: imageSourceInput,
    answers: 'image',
    docs: 'docs/images.md',
  }),
  defineOperation({ group: 'Image Processing', method: null, path: null, summary: 'Change clothes on a person using a clothing image', backend: 'provider', notOffered: 'out of commission in the original catalog' }),

  // Media
  defineOperation({
    group: 'Media',
    method: 'GET',
    path: '/api/media',
    errors: errorCases(FETCH_ERRORS, PAGE_ERRORS),
    summary: 'Parse a media URL: oEmbed, OpenGraph and Twitter cards, known URL patterns',
    backend: 'local',
    handle: handleMedia,
    cost: HEAVY_COSTS.page,
    input: mediaInput,
    answers: 'json',
    docs: 'docs/media.md',
  }),

  // AI
  defineOperation({ group: 'AI', method: 'POST', path: '/api/copilot', errors: GATEWAY_CALL_ERRORS, summary: 'Copilot assistant (gateway alias `copilot`)', backend: 'gateway', handle: handleChatOperation('copilot'), input: chatOperationInput, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'POST', path: '/api/llama-70b', errors: GATEWAY_CALL_ERRORS, summary: '70B-class language model (gateway alias `llama-70b`, sampling fields forwarded)', backend: 'gateway', handle: handleChatOperation('llama-70b'), input: chatOperationInput, docs: 'docs/chat.md' }),
  defineOperation({
    group: 'AI',
    method: 'POST',
    path: '/api/reasoning-70b',
    errors: GATEWAY_CALL_ERRORS,
    summary: 'Reasoning model, distilled 70B (gateway alias `reasoning-70b`, sampling fields forwarded)',
    backend: 'gateway',
    handle: handleChatOperation('reasoning-70b'),
    input: chatOperationInput,
    docs: 'docs/chat.md',
  }),
  defineOperation({
    group: 'AI',
    method: 'GET',
    path: '/api/online',
    auth: 'gateway-key',
    errors: errorCases(GATEWAY_CALL_ERRORS, ONLINE_ERRORS),
    summary: 'Latest information online: web search (SearXNG JSON API), then the gateway answers with numbered sources',
    backend: 'provider',
    providers: ['SEARCH'],
    needsGateway: true,
    handle: handleOnline,
    input: onlineInput,
    answers: 'json',
    docs: 'docs/search.md',
  }),
  defineOperation({ group: 'AI', method: 'GET', path: '/api/reasoning-small', errors: GATEWAY_CALL_ERRORS, summary: 'Small reasoning model (gateway alias `reasoning-small`), `?content=`', backend: 'gateway', handle: handleChatQuery('reasoning-small'), input: chatQueryInput, docs: 'docs/chat.md' }),
  defineOperation({
    group: 'AI',
    method: 'POST',
    path: '/api/v1/chat/completions',
    errors: GATEWAY_CALL_ERRORS,
    summary: 'Chat completions, OpenAI-compatible (streams with `stream: true`)',
    backend: 'gateway',
    handle: handleChatCompletions,
    input: chatCompletionInput,
    docs: 'docs/chat.md',
  }),
  defineOperation({ group: 'AI', method: 'GET', path: '/api/v1/models', summary: 'The model names the gateway serves, OpenAI-compatible', backend: 'gateway', handle: handleListModels, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'GET', path: '/api/v1/models/:id', errors: { 404: 'The model is not served here (GET /api/v1/models lists the names that are)' }, summary: 'One model name the gateway serves, OpenAI-compatible', backend: 'gateway', handle: handleGetModel, input: modelIdInput, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'POST', path: '/api/v1/responses', errors: GATEWAY_CALL_ERRORS, summary: "OpenAI's Responses API: input items, tools, JSON schema, `previous_response_id`, typed events with `stream: true`", backend: 'gateway', handle: handleCreateResponse, input: responsesInput, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'GET', path: '/api/v1/responses/:id', errors: { 404: 'No stored response with this id for this key' }, summary: 'A stored response (24 hours, the key that made it)', backend: 'gateway', handle: handleGetResponse, input: responseIdInput, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'DELETE', path: '/api/v1/responses/:id', errors: { 404: 'No stored response with this id for this key' }, summary: 'Delete a stored response (at its provider too when the provider keeps it)', backend: 'gateway', handle: handleDeleteResponse, input: responseIdInput, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'POST', path: '/api/v1/messages', errors: GATEWAY_CALL_ERRORS, summary: "Anthropic's Messages API on any provider (Anthropic's clients with `baseURL` `/api`), streamed with Anthropic's events", backend: 'gateway', handle: handleMessages, input: messagesInput, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'POST', path: '/api/v1/embeddings', errors: GATEWAY_CALL_ERRORS, summary: 'Embeddings, OpenAI-compatible, on the provider serving the model', backend: 'gateway', handle: handleEmbeddings, input: embeddingsInput, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'POST', path: '/api/v1/moderations', errors: GATEWAY_CALL_ERRORS, summary: 'Moderation, OpenAI-compatible, on the provider serving the model', backend: 'gateway', handle: handleModerations, input: moderationsInput, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'POST', path: '/api/v1/audio/speech', errors: GATEWAY_CALL_ERRORS, summary: 'Speech, OpenAI-compatible: the audio streamed back from the provider serving the model', backend: 'gateway', handle: handleSpeech, input: audioSpeechInput, answers: 'audio', docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'POST', path: '/api/v1/audio/transcriptions', errors: GATEWAY_CALL_ERRORS, summary: 'Transcription, OpenAI-compatible: multipart `file` and `model`, streamed on to the provider serving the model', backend: 'gateway', handle: handleTranscription, input: audioTranscriptionFields, multipart: 'file', docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'GET', path: '/api/v1/usage', errors: { 401: 'The gateway has no keys: usage is recorded per key' }, summary: "The calling key's own gateway usage by UTC day and model (`?days=`, default 30)", backend: 'gateway', handle: handleGetUsage, input: gatewayUsageInput, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'GET', path: '/api/gpt', errors: GATEWAY_CALL_ERRORS, summary: 'Chat through the configured official provider (gateway alias `gpt`), `?content=`', backend: 'gateway', handle: handleChatQuery('gpt'), input: chatQueryInput, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'GET', path: '/api/chat/providers', auth: 'gateway-key', summary: 'The configured chat providers, by name and protocol (no keys, no URLs)', backend: 'local', handle: handleChatProviders, docs: 'docs/chat.md' }),
  defineOperation({ group: 'AI', method: 'GET', path: '/api/chat/models', auth: 'gateway-key', summary: 'The chat model names and the upstream models that serve each, in fallback order', backend: 'local', handle: handleChatModels, docs: 'docs/chat.md' }),

  // LLM
  defineOperation({ group: 'LLM', method: 'GET', path: '/api/coder', errors: GATEWAY_CALL_ERRORS, summary: 'Lightweight coder (gateway alias `coder`), `?prompt=&maxTokens=`, answered as plain text', backend: 'gateway', handle: handleCoder, input: coderInput, answers: 'text', docs: 'docs/chat.md' }),
  defineOperation({
    group: 'LLM',
    method: 'POST',
    path: '/api/inference/chat/completions',
    errors: GATEWAY_CALL_ERRORS,
    summary: 'Chat completion at a second OpenAI-compatible upstream (`inference` provider: PLAZA_INFERENCE_BASE_URL)',
    backend: 'gateway',
    providers: ['INFERENCE'],
    handle: handleInferenceCompletions,
    input: chatCompletionInput,
    docs: 'docs/chat.md',
  }),
  defineOperation({ group: 'LLM', method: 'GET', path: '/api/chat', errors: errorCases(GATEWAY_CALL_ERRORS, CONVERSATION_ERRORS), summary: 'Chat with a conversation kept on the server (gateway alias `chat`), `?content=&conversationId=`', backend: 'gateway', handle: handleConversation, input: conversationInput, docs: 'docs/chat.md' }),
  defineOperation({ group: 'LLM', method: 'POST', path: '/api/chat', errors: errorCases(GATEWAY_CALL_ERRORS, CONVERSATION_ERRORS), summary: 'Chat with a conversation kept on the server, JSON body `{content, conversationId?}` (gateway alias `chat`)', backend: 'gateway', handle: handleConversation, input: conversationInput, docs: 'docs/chat.md' }),
  defineOperation({
    group: 'LLM',
    method: 'POST',
    path: '/api/agent',
    summary: 'Coding agent whose tool is /api/execute, streamed as Server-Sent Events (premium keys only)',
    backend: 'gateway',
    auth: 'premium-key',
    answers: 'event-stream',
    handle: handleAgent,
    cost: HEAVY_COSTS.agent,
    input: agentInput,
    errors: errorCases(GATEWAY_CALL_ERRORS, { 403: 'No key, or a key that is not premium' }),
    docs: 'docs/agent.md',
  }),
  defineOperation({
    group: 'LLM',
    method: 'POST',
    path: '/api/chaty',
    errors: GATEWAY_CALL_ERRORS,
    summary: 'Chat (gateway alias `chaty`)',
    backend: 'gateway',
    handle: handleChatOperation('chaty'),
    input: chatOperationInput,
    docs: 'docs/chat.md',
  }),

  // NSFW
  defineOperation({ group: 'NSFW', method: null, path: null, summary: 'Adult content', backend: 'provider', notOffered: 'Plaza does not serve adult content (decisions §5)' }),

  // Audio
  defineOperation({ group: 'Audio', method: 'GET', path: '/api/tts/flite', errors: errorCases(SPEECH_ERRORS, POOL_ERRORS), summary: 'Speech with Flite, in Plaza', backend: 'local', handle: handleFlite, cost: HEAVY_COSTS.speech, input: fliteInput, answers: 'audio', docs: 'docs/speech.md' }),
  defineOperation({ group: 'Audio', method: 'GET', path: '/api/tts/flite/voices', summary: "Flite's built-in voices", backend: 'local', handle: handleFliteVoices, docs: 'docs/speech.md' }),
  defineOperation({
    group: 'Audio',
    method: 'GET',
    path: '/api/tts/espeak',
    errors: errorCases(SPEECH_ERRORS, POOL_ERRORS, ESPEAK_ERRORS),
    summary: 'Speech with eSpeak NG, in Plaza (optional package)',
    backend: 'local',
    handle: handleEspeak,
    cost: HEAVY_COSTS.speech,
    input: espeakInput,
    answers: 'audio',
    docs: 'docs/speech.md',
    optionalPackage: ESPEAK_OPTIONAL,
  }),
  defineOperation({ group: 'Audio', method: 'GET', path: '/api/tts/espeak/voices', errors: ESPEAK_ERRORS, summary: "eSpeak NG's voices and languages (optional package)", backend: 'local', handle: handleEspeakVoices, docs: 'docs/speech.md', optionalPackage: ESPEAK_OPTIONAL }),
  defineOperation({ group: 'Audio', method: 'GET', path: '/api/tts/openai', summary: 'Speech from an OpenAI-compatible speech provider (streamed)', backend: 'provider', providers: ['SPEECH'], handle: handleOpenAiSpeech, cost: HEAVY_COSTS.speech, input: openaiSpeechInput, answers: 'audio', docs: 'docs/speech.md' }),
  defineOperation({ group: 'Audio', method: 'GET', path: '/api/tts/elevenlabs', summary: 'Speech from ElevenLabs (streamed)', backend: 'provider', providers: ['ELEVENLABS'], handle: handleElevenLabsSpeech, cost: HEAVY_COSTS.speech, input: elevenlabsInput, answers: 'audio', docs: 'docs/speech.md' }),
  defineOperation({ group: 'Audio', method: 'GET', path: '/api/tts/polly', summary: 'Speech from Amazon Polly (streamed)', backend: 'provider', providers: ['POLLY'], handle: handlePollySpeech, cost: HEAVY_COSTS.speech, input: pollyInput, answers: 'audio', docs: 'docs/speech.md' }),
  defineOperation({ group: 'Audio', method: 'GET', path: '/api/tts/azure', summary: 'Speech from Azure AI Speech (streamed)', backend: 'provider', providers: ['AZURE_SPEECH'], handle: handleAzureSpeech, cost: HEAVY_COSTS.speech, input: azureSpeechInput, answers: 'audio', docs: 'docs/speech.md' }),

  // Weather
  defineOperation({
    group: 'Weather',
    method: 'GET',
    path: '/api/weather',
    errors: WEATHER_ERRORS,
    summary: 'Current weather and a 7-day forecast of a location (Open-Meteo protocol)',
    backend: 'provider',
    providers: ['WEATHER'],
    handle: handleWeather,
    input: weatherInput,
    answers: 'json',
    docs: 'docs/weather.md',
  }),

  // Maker
  defineOperation({
    group: 'Maker',
    method: 'POST',
    path: '/api/carbon',
    errors: errorCases(CODE_IMAGE_ERRORS, POOL_ERRORS),
    summary: "Image from code with carbon.now.sh's options",
    backend: 'local',
    handle: handleCarbon,
    cost: HEAVY_COSTS.render,
    input: carbonInput,
    answers: 'image',
    docs: 'docs/carbon.md',
  }),
  defineOperation({
    group: 'Maker',
    method: 'POST',
    path: '/api/codeimage',
    errors: errorCases(CODE_IMAGE_ERRORS, IMAGE_SOURCE_ERRORS, POOL_ERRORS),
    summary: "Code-snippet image in ray.so's look, rendered on the server",
    backend: 'local',
    handle: handleCodeImage,
    cost: HEAVY_COSTS.render,
    input: codeImageInput,
    answers: 'image',
    docs: 'docs/codeimage.md',
  }),
  defineOperation({ group: 'Maker', method: 'GET', path: '/api/meme', errors: CARD_ERRORS, summary: 'Meme from a bundled template (or an image URL) with outlined captions', backend: 'local', handle: handleMeme, cost: HEAVY_COSTS.render, input: memeInput, answers: 'image', docs: 'docs/maker.md' }),
  defineOperation({ group: 'Maker', method: 'GET', path: '/api/meme/templates', summary: 'The bundled meme templates', backend: 'local', handle: handleMemeTemplates, answers: 'json', docs: 'docs/maker.md' }),
  defineOperation({ group: 'Maker', method: 'GET', path: '/api/fakepost', errors: CARD_ERRORS, summary: 'A social-post card image with text, name, username and avatar, marked as generated', backend: 'local', handle: handleFakepost, cost: HEAVY_COSTS.render, input: fakepostInput, answers: 'image', docs: 'docs/maker.md' }),
  defineOperation({ group: 'Maker', method: 'GET', path: '/api/logo', errors: POOL_ERRORS, summary: 'A text logo in one of several SVG styles, as PNG', backend: 'local', handle: handleLogo, cost: HEAVY_COSTS.render, input: logoInput, answers: 'image', docs: 'docs/maker.md' }),

  // IMAGE-GENERATORS
  defineOperation({
    group: 'IMAGE-GENERATORS',
    method: 'GET',
    path: '/api/imagine',
    summary: 'Image from a prompt with one of eleven model aliases (OpenAI images, AUTOMATIC1111 or hosted-inference protocol)',
    backend: 'provider',
    providers: ['IMAGES'],
    handle: handleImagine,
    input: imagineInput,
    answers: 'image',
    docs: 'docs/images.md',
  }),
  defineOperation({
    group: 'IMAGE-GENERATORS',
    method: 'POST',
    path: '/api/v1/images/generations',
    auth: 'gateway-key',
    summary: 'Image generation, OpenAI-compatible (`url` or `b64_json`), on the same providers as /api/imagine',
    backend: 'provider',
    providers: ['IMAGES'],
    handle: handleImageGenerations,
    input: imageGenerationsInput,
    answers: 'json',
    docs: 'docs/images.md',
  }),

  // Anime
  defineOperation({
    group: 'Anime',
    method: 'GET',
    path: '/api/toanime',
    errors: IMAGE_SOURCE_ERRORS,
    summary: 'An anime version of an image (image-to-image: OpenAI images, AUTOMATIC1111 or hosted-inference protocol)',
    backend: 'provider',
    providers: ['IMAGES'],
    handle: handleToAnime,
    input: imageSourceInput,
    answers: 'image',
    docs: 'docs/images.md',
  }),
]

export { isOffered } from './offered.js'
