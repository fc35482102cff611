// Database faults: the errors that say the database (or its disk, or the way to it) cannot do the
// work now, as opposed to a bug or a bad input. Every edge answers them 503 `database_unavailable`
// with Retry-After (never 500), and readiness and metrics count them. One classifier, used by all.

/** Why the database could not do the work: the `reason` of a 503 `database_unavailable`. */
export type DatabaseFaultReason =
  | 'deadline' // no answer within the call's deadline (ours, or the server's statement timeout)
  | 'connection' // the connection was refused, reset or closed
  | 'disk_full'
  | 'read_only'
  | 'too_many_connections'
  | 'out_of_resources'
  | 'shutdown' // the server is shutting down, restarting or recovering
  | 'io_error';

/**
 * Thrown by the Db seam when a call misses its deadline. The connection it ran on is destroyed,
 * never reused: whether the statement ran is unknown, and a late answer would land on the next one.
 */
export class DatabaseDeadlineError extends Error {
  readonly code = 'CHATGATE_DB_DEADLINE';
  constructor(readonly deadlineMs: number) {
    super(`the database did not answer within ${deadlineMs} ms`);
    this.name = 'DatabaseDeadlineError';
  }
}

/** SQLSTATE codes and classes (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
const BY_SQLSTATE: Record<string, DatabaseFaultReason> = {
  '53100': 'disk_full',
  '53300': 'too_many_connections',
  '25006': 'read_only', // read_only_sql_transaction: a standby, or default_transaction_read_only
  '57014': 'deadline', // query_canceled: statement_timeout
  '25P03': 'deadline', // idle_in_transaction_session_timeout
  '57P01': 'shutdown', // admin_shutdown
  '57P02': 'shutdown', // crash_shutdown
  '57P03': 'shutdown', // cannot_connect_now (starting up, recovering)
  '58030': 'io_error',
};
const BY_SQLSTATE_CLASS: Record<string, DatabaseFaultReason> = {
  '08': 'connection', // connection_exception
  '53': 'out_of_resources', // insufficient_resources
  '58': 'io_error', // system_error
};

/** Node's socket errors and the drivers' own connection errors (postgres.js, node-postgres). */
const BY_CLIENT_CODE: Record<string, DatabaseFaultReason> = {
  CHATGATE_DB_DEADLINE: 'deadline',
  ECONNRESET: 'connection',
  ECONNREFUSED: 'connection',
  EPIPE: 'connection',
  ETIMEDOUT: 'connection',
  EHOSTUNREACH: 'connection',
  ENETUNREACH: 'connection',
  ENOTFOUND: 'connection',
  EAI_AGAIN: 'connection',
  CONNECTION_CLOSED: 'connection',
  CONNECTION_ENDED: 'connection',
  CONNECTION_DESTROYED: 'connection',
  CONNECT_TIMEOUT: 'deadline',
  // The embedded database's file system (PGlite on the data folder)
  ENOSPC: 'disk_full',
  EDQUOT: 'disk_full',
  EROFS: 'read_only',
  EIO: 'io_error',
};

const SQLSTATE = /^[0-9A-Z]{5}$/;
const NODE_POSTGRES_LOST =
  /^Connection terminated|^Query read timeout|timeout exceeded when trying to connect|^Client has encountered a connection error|^Client was closed and is not queryable/;

/** The fault an error reports, or null when it is not a database fault (a bug, a constraint, bad input). */
export function databaseFault(err: unknown): DatabaseFaultReason | null {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (SQLSTATE.test(code) && /^[0-9]/.test(code)) {
        const reason = BY_SQLSTATE[code] ?? BY_SQLSTATE_CLASS[code.slice(0, 2)];
        if (reason) return reason;
      } else if (BY_CLIENT_CODE[code]) return BY_CLIENT_CODE[code];
    }
    const errno = (e as { errno?: unknown }).errno;
    // Emscripten's file system (PGlite) reports ENOSPC as errno 28 (and EROFS 69, EIO 29) with no code.
    if ((e as { name?: unknown }).name === 'ErrnoError' && typeof errno === 'number') {
      const byErrno: Record<number, DatabaseFaultReason> = { 28: 'disk_full', 69: 'read_only', 29: 'io_error' };
      if (byErrno[errno]) return byErrno[errno];
    }
    // node-postgres reports a lost connection by message only (also to a statement sent after the
    // loss on a client it still holds, as in a transaction between two statements).
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && NODE_POSTGRES_LOST.test(message))
      return /timeout/.test(message) ? 'deadline' : 'connection';
  }
  return null;
}
