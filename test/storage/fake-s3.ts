/**
 * A real HTTP server on loopback speaking the S3 REST protocol (path-style: `/<bucket>/<key>`),
 * as MinIO or AWS would, for the object-storage tests. No maintained S3 server is on npm (s3rver,
 * the usual choice, is unmaintained at 3.7.1 on @koa/router 9, busboy 0.3 and fast-xml-parser 3;
 * MinIO is not an npm package), so this one holds objects in memory
 * and covers what Plaza uses: PutObject, CopyObject, GetObject (Range, response-* overrides),
 * HeadObject, DeleteObject, ListObjectsV2, the multipart calls and ListMultipartUploads.
 *
 * Every request is authenticated as S3 does it, by an independent implementation of AWS Signature
 * Version 4: the Authorization header (with the payload's SHA-256 checked against the body) or a
 * presigned URL's query (with its expiry). A wrong key or signature is a 403, like the real thing.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeObject {
  body: Buffer
  contentType: string
  lastModified: Date
  etag: string
}

interface MultipartUpload {
  key: string
  initiated: Date
  contentType: string
  parts: Map<number, { body: Buffer; etag: string }>
}

export interface RecordedS3Request {
  method: string
  key: string
  /** The operation, as S3 names it (PutObject, CopyObject, UploadPart, ...). */
  operation: string
  /** How the request was signed. */
  auth: 'header' | 'query'
}

export interface FakeS3 {
  url: string
  bucket: string
  accessKeyId: string
  secretAccessKey: string
  region: string
  objects: Map<string, FakeObject>
  uploads: Map<string, MultipartUpload>
  requests: RecordedS3Request[]
  /** The env that points Plaza at this server (path-style, its credentials), with `prefix`. */
  env(prefix?: string, extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv
  /** While on, every request is answered 503 ServiceUnavailable (after its signature is checked), as in an outage. */
  outage(on: boolean): void
  /** Makes objects and unfinished uploads whose key starts with `prefix` look `ms` older. */
  age(prefix: string, ms: number): void
  close(): Promise<void>
}

const MIN_PART = 5 * 1024 * 1024
const MAX_BODY = 64 * 1024 * 1024
/** What S3 answers for a list call without max-keys; tests lower it to exercise paging. */
const PAGE = 1000

class S3Fault extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex')
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest()
const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex')

/** RFC 3986 encoding, as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
const encode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

const xmlEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY) req.destroy(new Error('body too large for the fake S3 server'))
      else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

/** The raw query as SigV4 pairs (decoded), `uploads` style flags with an empty value. */
function queryPairs(rawQuery: string): Array<[string, string]> {
  if (rawQuery === '') return []
  return rawQuery.split('&').map((part) => {
    const at = part.indexOf('=')
    const name = at < 0 ? part : part.slice(0, at)
    const value = at < 0 ? '' : part.slice(at + 1)
    return [decodeURIComponent(name), decodeURIComponent(value)]
  })
}

function canonicalQuery(pairs: Array<[string, string]>): string {
  return pairs
    .map(([name, value]) => [encode(name), encode(value)])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&')
}

function amzDateOf(text: string): Date {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text)
  if (!match) throw new S3Fault(403, 'AccessDenied', `bad X-Amz-Date ${text}`)
  return new Date(`${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}Z`)
}

export async function startFakeS3(options: { bucket?: string; pageSize?: number } = {}): Promise<FakeS3> {
  const bucket = options.bucket ?? 'plaza-test'
  const accessKeyId = 'FAKEACCESSKEY' + randomBytes(4).toString('hex').toUpperCase()
  const secretAccessKey = randomBytes(24).toString('base64url')
  const region = 'us-east-1'
  const pageSize = options.pageSize ?? PAGE
  const objects = new Map<string, FakeObject>()
  const uploads = new Map<string, MultipartUpload>()
  const requests: RecordedS3Request[] = []
  let down = false

  /** Checks the request's SigV4 signature (header or query); answers how it was signed. */
  function authenticate(req: IncomingMessage, rawPath: string, pairs: Array<[string, string]>, body: Buffer): 'header' | 'query' {
    const header = req.headers.authorization
    const query = new Map(pairs)
    let credential: string, signedHeaders: string, signature: string, amzDate: string, payloadHash: string
    let auth: 'header' | 'query'
    let canonicalPairs = pairs
    if (header) {
      const match = /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(header)
      if (!match) throw new S3Fault(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed')
      ;[, credential, signedHeaders, signature] = match
      amzDate = String(req.headers['x-amz-date'] ?? '')
      payloadHash = String(req.headers['x-amz-content-sha256'] ?? '')
      if (payloadHash.startsWith('STREAMING-')) throw new S3Fault(501, 'NotImplemented', 'aws-chunked bodies are not supported by this server')
      if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256(body)) {
        throw new S3Fault(400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed')
      }
      auth = 'header'
    } else if (query.get('X-Amz-Algorithm') === 'AWS4-HMAC-SHA256') {
      credential = query.get('X-Amz-Credential') ?? ''
      signedHeaders = query.get('X-Amz-SignedHeaders') ?? ''
      signature = query.get('X-Amz-Signature') ?? ''
      amzDate = query.get('X-Amz-Date') ?? ''
      payloadHash = 'UNSIGNED-PAYLOAD'
      const expires = Number(query.get('X-Amz-Expires'))
      if (!Number.isInteger(expires) || expires < 1 || expires > 604800) throw new S3Fault(400, 'AuthorizationQueryParametersError', 'X-Amz-Expires must be 1 to 604800')
      if (Date.now() > amzDateOf(amzDate).getTime() + expires * 1000) throw new S3Fault(403, 'AccessDenied', 'Request has expired')
      canonicalPairs = pairs.filter(([name]) => name !== 'X-Amz-Signature')
      auth = 'query'
    } else {
      throw new S3Fault(403, 'AccessDenied', 'Anonymous access is forbidden for this operation')
    }
    const [keyId, date, scopeRegion, service, terminal] = credential.split('/')
    if (keyId !== accessKeyId) throw new S3Fault(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.')
    if (scopeRegion !== region || service !== 's3' || terminal !== 'aws4_request' || !amzDate.startsWith(date)) {
      throw new S3Fault(400, 'AuthorizationHeaderMalformed', `bad credential scope ${date}/${scopeRegion}/${service}/${terminal}`)
    }
    const names = signedHeaders.split(';')
    if (!names.includes('host')) throw new S3Fault(403, 'AccessDenied', 'host must be signed')
    const canonicalHeaders = names.map((name) => `${name}:${String(req.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('')
    const canonicalRequest = [req.method, rawPath, canonicalQuery(canonicalPairs), canonicalHeaders, signedHeaders, payloadHash].join('\n')
    const scope = `${date}/${region}/s3/aws4_request`
    const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n')
    const signingKey = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), 's3'), 'aws4_request')
    const expected = createHmac('sha256', signingKey).update(stringToSign).digest('hex')
    if (expected !== signature) throw new S3Fault(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.')
    return auth
  }

  function sendXml(res: ServerResponse, status: number, xml: string, headers: Record<string, string | number> = {}) {
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n${xml}`
    res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), ...headers })
    res.end(body)
  }

  function objectHeaders(object: FakeObject): Record<string, string | number> {
    return { etag: object.etag, 'last-modified': object.lastModified.toUTCString(), 'accept-ranges': 'bytes', 'content-type': object.contentType }
  }

  function list(res: ServerResponse, params: Map<string, string>) {
    const prefix = params.get('prefix') ?? ''
    const max = Math.min(Number(params.get('max-keys') ?? pageSize), pageSize)
    const after = params.get('continuation-token') ?? params.get('start-after') ?? ''
    const keys = [...objects.keys()].filter((key) => key.startsWith(prefix) && key > after).sort()
    const page = keys.slice(0, max)
    const truncated = keys.length > page.length
    const contents = page
      .map((key) => {
        const object = objects.get(key)!
        return `<Contents><Key>${xmlEscape(key)}</Key><LastModified>${object.lastModified.toISOString()}</LastModified><ETag>${xmlEscape(object.etag)}</ETag><Size>${object.body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`
      })
      .join('')
    const next = truncated ? `<NextContinuationToken>${xmlEscape(page[page.length - 1])}</NextContinuationToken>` : ''
    sendXml(
      res,
      200,
      `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${bucket}</Name><Prefix>${xmlEscape(prefix)}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${max}</MaxKeys><IsTruncated>${truncated}</IsTruncated>${contents}${next}</ListBucketResult>`,
    )
  }

  function listUploads(res: ServerResponse, params: Map<string, string>) {
    const prefix = params.get('prefix') ?? ''
    const marker = `${params.get('key-marker') ?? ''}\u0000${params.get('upload-id-marker') ?? ''}`
    const all = [...uploads.entries()]
      .filter(([, upload]) => upload.key.startsWith(prefix))
      .map(([id, upload]) => ({ id, upload, order: `${upload.key}\u0000${id}` }))
      .filter((entry) => params.get('key-marker') === undefined || entry.order > marker)
      .sort((a, b) => (a.order < b.order ? -1 : 1))
    const page = all.slice(0, pageSize)
    const truncated = all.length > page.length
    const last = page[page.length - 1]
    const items = page
      .map(({ id, upload }) => `<Upload><Key>${xmlEscape(upload.key)}</Key><UploadId>${id}</UploadId><Initiated>${upload.initiated.toISOString()}</Initiated><StorageClass>STANDARD</StorageClass></Upload>`)
      .join('')
    const next = truncated ? `<NextKeyMarker>${xmlEscape(last.upload.key)}</NextKeyMarker><NextUploadIdMarker>${last.id}</NextUploadIdMarker>` : ''
    sendXml(
      res,
      200,
      `<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${bucket}</Bucket><Prefix>${xmlEscape(prefix)}</Prefix><MaxUploads>${pageSize}</MaxUploads><IsTruncated>${truncated}</IsTruncated>${next}${items}</ListMultipartUploadsResult>`,
    )
  }

  function parseRange(header: string, size: number): { start: number; end: number } {
    const match = /^bytes=(\d*)-(\d*)$/.exec(header)
    if (!match || (match[1] === '' && match[2] === '')) return { start: 0, end: size - 1 }
    let start: number, end: number
    if (match[1] === '') {
      start = Math.max(0, size - Number(match[2]))
      end = size - 1
    } else {
      start = Number(match[1])
      end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1)
    }
    if (start >= size || end < start) throw new S3Fault(416, 'InvalidRange', 'The requested range is not satisfiable')
    return { start, end }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const raw = req.url ?? '/'
    const at = raw.indexOf('?')
    const rawPath = at < 0 ? raw : raw.slice(0, at)
    const pairs = queryPairs(at < 0 ? '' : raw.slice(at + 1))
    const params = new Map(pairs)
    const body = await readBody(req)
    const auth = authenticate(req, rawPath, pairs, body)
    if (down) throw new S3Fault(503, 'ServiceUnavailable', 'Please reduce your request rate.')
    const [, bucketName, ...rest] = rawPath.split('/')
    const key = decodeURIComponent(rest.join('/'))
    if (bucketName !== bucket) throw new S3Fault(404, 'NoSuchBucket', 'The specified bucket does not exist')
    const method = req.method ?? 'GET'
    const record = (operation: string) => requests.push({ method, key, operation, auth })

    if (key === '') {
      if (method === 'GET' && params.has('uploads')) return record('ListMultipartUploads'), listUploads(res, params)
      if (method === 'GET' && params.get('list-type') === '2') return record('ListObjectsV2'), list(res, params)
      throw new S3Fault(501, 'NotImplemented', `${method} on the bucket is not implemented by this server`)
    }
    const uploadId = params.get('uploadId')
    if (method === 'POST' && params.has('uploads')) {
      record('CreateMultipartUpload')
      const id = randomBytes(12).toString('hex')
      uploads.set(id, { key, initiated: new Date(), contentType: String(req.headers['content-type'] ?? 'binary/octet-stream'), parts: new Map() })
      return sendXml(res, 200, `<InitiateMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${xmlEscape(key)}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`)
    }
    if (uploadId !== undefined) {
      const upload = uploads.get(uploadId)
      if (!upload || upload.key !== key) throw new S3Fault(404, 'NoSuchUpload', 'The specified upload does not exist')
      if (method === 'PUT') {
        record('UploadPart')
        const number = Number(params.get('partNumber'))
        if (!Number.isInteger(number) || number < 1 || number > 10000) throw new S3Fault(400, 'InvalidArgument', 'bad partNumber')
        const etag = `"${md5(body)}"`
        upload.parts.set(number, { body, etag })
        res.writeHead(200, { etag, 'content-length': 0 })
        return res.end()
      }
      if (method === 'POST') {
        record('CompleteMultipartUpload')
        const listed = [...body.toString('utf8').matchAll(/<Part>[\s\S]*?<\/Part>/g)].map((match) => ({
          number: Number(/<PartNumber>(\d+)<\/PartNumber>/.exec(match[0])?.[1]),
          etag: (/<ETag>([^<]*)<\/ETag>/.exec(match[0])?.[1] ?? '').replace(/&quot;/g, '"'),
        }))
        if (listed.length === 0) throw new S3Fault(400, 'MalformedXML', 'no parts listed')
        const chosen = listed.map((part, i) => {
          const stored = upload.parts.get(part.number)
          if (!stored || stored.etag !== part.etag) throw new S3Fault(400, 'InvalidPart', `part ${part.number} was not uploaded`)
          if (i > 0 && part.number <= listed[i - 1].number) throw new S3Fault(400, 'InvalidPartOrder', 'parts must be in order')
          if (i < listed.length - 1 && stored.body.length < MIN_PART) throw new S3Fault(400, 'EntityTooSmall', 'a part is smaller than 5 MiB')
          return stored
        })
        const etag = `"${md5(Buffer.concat(chosen.map((part) => Buffer.from(part.etag.slice(1, -1), 'hex'))))}-${chosen.length}"`
        objects.set(key, { body: Buffer.concat(chosen.map((part) => part.body)), contentType: upload.contentType, lastModified: new Date(), etag })
        uploads.delete(uploadId)
        return sendXml(res, 200, `<CompleteMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${xmlEscape(key)}</Key><ETag>${xmlEscape(etag)}</ETag></CompleteMultipartUploadResult>`)
      }
      if (method === 'DELETE') {
        record('AbortMultipartUpload')
        uploads.delete(uploadId)
        res.writeHead(204)
        return res.end()
      }
    }
    if (method === 'PUT') {
      const source = req.headers['x-amz-copy-source']
      if (source) {
        record('CopyObject')
        const [sourceBucket, ...sourceKey] = decodeURIComponent(String(source)).replace(/^\//, '').split('/')
        const original = sourceBucket === bucket ? objects.get(sourceKey.join('/')) : undefined
        if (!original) throw new S3Fault(404, 'NoSuchKey', 'The specified key does not exist.')
        const copy = { ...original, lastModified: new Date() }
        objects.set(key, copy)
        return sendXml(res, 200, `<CopyObjectResult><LastModified>${copy.lastModified.toISOString()}</LastModified><ETag>${xmlEscape(copy.etag)}</ETag></CopyObjectResult>`)
      }
      record('PutObject')
      const etag = `"${md5(body)}"`
      objects.set(key, { body, contentType: String(req.headers['content-type'] ?? 'binary/octet-stream'), lastModified: new Date(), etag })
      res.writeHead(200, { etag, 'content-length': 0 })
      return res.end()
    }
    if (method === 'DELETE') {
      record('DeleteObject')
      objects.delete(key)
      res.writeHead(204)
      return res.end()
    }
    if (method === 'GET' || method === 'HEAD') {
      record(method === 'GET' ? 'GetObject' : 'HeadObject')
      const object = objects.get(key)
      if (!object) throw new S3Fault(404, 'NoSuchKey', 'The specified key does not exist.')
      const headers = objectHeaders(object)
      if (params.has('response-content-type')) headers['content-type'] = params.get('response-content-type')!
      if (params.has('response-cache-control')) headers['cache-control'] = params.get('response-cache-control')!
      const rangeHeader = req.headers.range
      if (method === 'GET' && rangeHeader) {
        const { start, end } = parseRange(rangeHeader, object.body.length)
        res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${object.body.length}`, 'content-length': end - start + 1 })
        return res.end(object.body.subarray(start, end + 1))
      }
      res.writeHead(200, { ...headers, 'content-length': object.body.length })
      return res.end(method === 'GET' ? object.body : undefined)
    }
    throw new S3Fault(405, 'MethodNotAllowed', `${method} is not allowed`)
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const fault = error instanceof S3Fault ? error : new S3Fault(500, 'InternalError', String(error))
      if (res.headersSent) return res.destroy()
      if (req.method === 'HEAD') {
        res.writeHead(fault.status, { 'x-amz-error-code': fault.code })
        return res.end()
      }
      sendXml(res, fault.status, `<Error><Code>${fault.code}</Code><Message>${xmlEscape(fault.message)}</Message></Error>`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    bucket,
    accessKeyId,
    secretAccessKey,
    region,
    objects,
    uploads,
    requests,
    env: (prefix = 'plaza', extra = {}) => ({
      PLAZA_STORAGE_URL: `s3://${bucket}${prefix ? `/${prefix}` : ''}`,
      PLAZA_S3_ENDPOINT: url,
      PLAZA_S3_REGION: region,
      PLAZA_S3_ACCESS_KEY_ID: accessKeyId,
      PLAZA_S3_SECRET_ACCESS_KEY: secretAccessKey,
      PLAZA_S3_FORCE_PATH_STYLE: '1',
      ...extra,
    }),
    outage(on) {
      down = on
    },
    age(prefix, ms) {
      for (const [key, object] of objects) if (key.startsWith(prefix)) object.lastModified = new Date(object.lastModified.getTime() - ms)
      for (const upload of uploads.values()) if (upload.key.startsWith(prefix)) upload.initiated = new Date(upload.initiated.getTime() - ms)
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
