/**
 * Which test data directories have their database on a libsql server (a sqld started for the
 * test, PLAZA_TEST_DATABASE=sqld): startTestServer records them, and the CLI a test runs on such a
 * directory (runCli) is given the server's PLAZA_DATABASE_URL, as an operator's would be.
 */
import path from 'node:path'

const remote = new Map<string, string>()

export function recordRemoteDatabase(dataDir: string, url: string): void {
  remote.set(path.resolve(dataDir), url)
}

export function forgetRemoteDatabase(dataDir: string): void {
  remote.delete(path.resolve(dataDir))
}

/** PLAZA_DATABASE_URL for a command run on `dataDir`, when that directory's database is on a libsql server; {} otherwise. */
export function databaseEnvFor(dataDir: string | undefined): { PLAZA_DATABASE_URL?: string } {
  const url = dataDir === undefined ? undefined : remote.get(path.resolve(dataDir))
  return url ? { PLAZA_DATABASE_URL: url } : {}
}

/** The data directory a command line names (`--data-dir DIR`, `--data-dir=DIR`, `-d DIR`), else PLAZA_DATA_DIR. */
export function dataDirOf(args: string[], env: NodeJS.ProcessEnv): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if ((args[i] === '--data-dir' || args[i] === '-d') && i + 1 < args.length) return args[i + 1]
    if (args[i].startsWith('--data-dir=')) return args[i].slice('--data-dir='.length)
  }
  return env.PLAZA_DATA_DIR
}
