/** Whether a server is about to let anyone spend the operator's provider keys. */
import type { Services } from '../../services.js'

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare) || /^::ffff:127\./.test(bare)
}

/**
 * The warning `plaza serve` prints once at start-up when the gateway is open (no key, auth not
 * required), a provider is configured, and the server listens beyond loopback; null otherwise.
 */
export async function openGatewayWarning(services: Services): Promise<string | null> {
  const { host } = services.config
  if (isLoopback(host) || !(await (await services.gatewayAccess()).isOpen())) return null
  const configured = await services.chat().then((gateway) => gateway.configured, () => false)
  if (!configured) return null
  return `the chat gateway is open: anyone who can reach this server (listening on ${host}) can use the configured model providers. Create a key (plaza admin keys create --name NAME) or set PLAZA_GATEWAY_AUTH=required.`
}
