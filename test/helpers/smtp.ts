/**
 * A real SMTP server on loopback (`smtp-server`, from the Nodemailer project) that takes Plaza's
 * mail with a user name and password and keeps every message, parsed with `mailparser`. A test can
 * make it answer the next messages with an SMTP error (451 is temporary, 550 permanent).
 */
import type { AddressInfo } from 'node:net'
import { simpleParser, type ParsedMail } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export const SMTP_USER = 'plaza'
export const SMTP_PASSWORD = 'smtp secret'

export interface Received {
  /** The envelope's recipients (RCPT TO). */
  to: string[]
  from: string
  mail: ParsedMail
}

export interface SmtpServer {
  /** `smtp://plaza:...@127.0.0.1:port`, for PLAZA_SMTP_URL. */
  url: string
  /**
   * A server's delivery settings for mail through this one: PLAZA_SMTP_URL, a sender, a public URL
   * for the links (a test that follows them sets the server's own once it listens) and a VAPID contact.
   */
  env: Record<string, string>
  received: Received[]
  /** Resolves once `count` messages in all have been accepted. */
  waitFor(count: number): Promise<Received[]>
  /** Refuses the next messages' data with these SMTP reply codes, then accepts again. */
  refuse(...codes: number[]): void
  /** Every message offered, accepted or not. */
  offered: number
  close(): Promise<void>
}

export async function startSmtpServer(): Promise<SmtpServer> {
  const received: Received[] = []
  const refusals: number[] = []
  const waiters: Array<{ count: number; resolve: (all: Received[]) => void }> = []
  let offered = 0
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) callback(null, { user: auth.username })
      else callback(new Error('Invalid username or password'))
    },
    onData(stream, session, callback) {
      offered++
      const code = refusals.shift()
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (code) {
          const error = Object.assign(new Error(code >= 500 ? 'Mailbox unavailable' : 'Try again later'), { responseCode: code })
          return callback(error)
        }
        simpleParser(Buffer.concat(chunks), (error, mail) => {
          if (error) return callback(error)
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), from: (session.envelope.mailFrom || { address: '' }).address, mail })
          callback()
          for (const waiter of [...waiters]) {
            if (received.length >= waiter.count) {
              waiters.splice(waiters.indexOf(waiter), 1)
              waiter.resolve(received.slice())
            }
          }
        })
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo).port
  const url = `smtp://${SMTP_USER}:${encodeURIComponent(SMTP_PASSWORD)}@127.0.0.1:${port}`
  return {
    url,
    env: { PLAZA_SMTP_URL: url, PLAZA_MAIL_FROM: 'Plaza <no-reply@plaza.example>', PLAZA_PUBLIC_URL: 'http://plaza.invalid', PLAZA_VAPID_SUBJECT: 'mailto:admin@plaza.example' },
    received,
    get offered() {
      return offered
    },
    waitFor(count) {
      if (received.length >= count) return Promise.resolve(received.slice())
      return new Promise((resolve) => waiters.push({ count, resolve }))
    },
    refuse(...codes) {
      refusals.push(...codes)
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
