/**
 * AWS Signature Version 4 for the requests Plaza makes to AWS (Amazon Polly), with AWS's own
 * signer (`@smithy/signature-v4`, loaded on first use) over node:crypto's SHA-256.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto'

type Data = string | ArrayBuffer | ArrayBufferView

const bytesOf = (data: Data): Buffer | string =>
  typeof data === 'string' ? data : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data)

/** The signer's hash: SHA-256, or HMAC-SHA-256 when given a secret. */
class Sha256 {
  private hash: Hash | Hmac
  constructor(private readonly secret?: Data) {
    this.hash = this.fresh()
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(this.secret))
  }
  update(data: Data): void {
    this.hash.update(bytesOf(data))
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest())
  }
  reset(): void {
    this.hash = this.fresh()
  }
}

export interface AwsCredentials {
  accessKeyId: string
  secretAccessKey: string
}

/**
 * The headers that sign a request (`authorization`, `x-amz-date`, `x-amz-content-sha256`, and the
 * ones given, which must then be sent as they are); `host` is signed but left to the HTTP client.
 */
export async function signAwsRequest(
  request: { url: string; method: string; headers: Record<string, string>; body: string },
  scope: { region: string; service: string; credentials: AwsCredentials; now?: Date },
): Promise<Record<string, string>> {
  const { SignatureV4 } = await import('@smithy/signature-v4')
  const url = new URL(request.url)
  const signer = new SignatureV4({ service: scope.service, region: scope.region, credentials: scope.credentials, sha256: Sha256 })
  const query: Record<string, string> = {}
  url.searchParams.forEach((value, key) => void (query[key] = value))
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      headers: { ...request.headers, host: url.host },
      body: request.body,
    },
    scope.now ? { signingDate: scope.now } : undefined,
  )
  const { host: _host, ...headers } = signed.headers
  return headers
}
