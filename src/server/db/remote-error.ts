/** What `plaza serve` reports of a libsql server it cannot use (db/remote.ts), apart so that it can be caught without loading the remote client. */
export class RemoteDatabaseError extends Error {}
