/** What `plaza serve` reports of a libsql server it cannot use (db/remote.ts), apart so that it can be caught without loading the remote client. */
export class RemoteDatabaseError extends Error {}

/**
 * The database cannot be reached right now (a libsql server down, not answering in time, or its
 * replica cut off from its primary): the request may succeed later, so the API answers 503 with
 * Retry-After (errors.ts, which knows it by name), never a 500. The message is for the log.
 */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError'

  /** `detail`: what went wrong (no answer in time, the connection refused, …), for the log and start-up's message. */
  constructor(
    where: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`the libsql server at ${where} is unavailable: ${detail}`, options)
  }
}
