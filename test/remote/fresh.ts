/** Requests on connections of their own, for tests of `plaza serve --workers N`. */
import http from 'node:http'

/** One request on a connection of its own (`agent: false`): the cluster hands each new connection to its next worker. */
export function fresh(url: string, method: string, route: string, token?: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const headers: Record<string, string> = {}
    if (token) headers.authorization = `Bearer ${token}`
    if (data) headers['content-type'] = 'application/json'
    const req = http.request(`${url}${route}`, { method, agent: false, headers }, (res) => {
      let text = ''
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end(data)
  })
}

