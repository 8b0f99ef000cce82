/**
 * The utility REST API of spec/utility-api.md, mounted at /api. The one place that lists its paths.
 */
import type { Route } from './adapter.js'
import { handleChatCompletions, handleChatOperation } from '../chat/http.js'
import { handleCodeImage } from '../codeimage/http.js'

export const utilityRoutes: Route[] = [
  // Code-snippet images (decisions §5): a handler route, since the default answer is image bytes.
  { method: 'POST', path: '/codeimage', handle: handleCodeImage },
  // Chat (decisions §5): handler routes, since `stream: true` answers Server-Sent Events.
  { method: 'POST', path: '/v1/chat/completions', handle: handleChatCompletions },
  { method: 'POST', path: '/chaty', handle: handleChatOperation('chaty') },
  { method: 'POST', path: '/reasoning-70b', handle: handleChatOperation('reasoning-70b') },
]
