/** The body every REST answer carries: `{status, message, data, timestamp}` (timestamp in Unix seconds). */
export interface Envelope<T = unknown> {
  status: 'success' | 'error'
  message: string
  data: T | null
  timestamp: number
}

export function successEnvelope<T>(data: T, message = 'OK', now = new Date()): Envelope<T> {
  return { status: 'success', message, data, timestamp: Math.floor(now.getTime() / 1000) }
}

export function errorEnvelope(message: string, now = new Date()): Envelope<null> {
  return { status: 'error', message, data: null, timestamp: Math.floor(now.getTime() / 1000) }
}
