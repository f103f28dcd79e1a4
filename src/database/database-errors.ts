import { QueryFailedError } from 'typeorm';

/** Node socket errors that mean the database cannot be reached. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * SQLSTATEs that mean "not now" rather than "never": connection exceptions (class 08), shutdown
 * and start-up (57P01-57P03), too many connections (53300), and our own statement/lock timeouts.
 */
const UNAVAILABLE_SQLSTATES = /^(08...|57P0[1-3]|53300|57014|55P03)$/;

/** Messages of node-postgres for a lost connection or a pool that could not connect in time. */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed)/;

/** What an error, or one of the errors it wraps, says: its code and its message. */
interface Said {
  code?: unknown;
  message?: unknown;
}

/**
 * Whether the error or one it wraps (a TypeORM `QueryFailedError`'s driver error, a `cause`)
 * has a string code `codes` matches or a message `messages` matches. Duck-typed, not
 * `instanceof Error`: socket errors may come from another realm (a test VM).
 */
function saysAnyOf(error: unknown, codes: (code: string) => boolean, messages: RegExp): boolean {
  for (let e: unknown = error, depth = 0; isObject(e) && depth < 5; depth++) {
    const { code, message } = e as Said;
    if (typeof code === 'string' && codes(code)) return true;
    if (typeof message === 'string' && messages.test(message)) return true;
    e = e instanceof QueryFailedError ? e.driverError : (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Whether an error says the database is unreachable or overloaded (answered 503 with Retry-After),
 * as opposed to a bug (500).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return saysAnyOf(
    error,
    (code) => NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.test(code),
    UNAVAILABLE_MESSAGES,
  );
}

/** SQLSTATEs of a connection the server ended: shutdown (57P01-57P02) and class 08. */
const LOST_SQLSTATES = /^(08...|57P0[12])$/;
const LOST_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);
const LOST_MESSAGES = /^(Connection terminated|Client has encountered a connection error)/;

/**
 * Whether a statement failed because its connection was gone (terminated by the server, reset,
 * closed) rather than because of the statement. A read failing so never reached the database's
 * answer and may be sent again on another connection.
 */
export function isConnectionLost(error: unknown): boolean {
  return saysAnyOf(
    error,
    (code) => LOST_SQLSTATES.test(code) || LOST_SOCKET_CODES.has(code),
    LOST_MESSAGES,
  );
}

/**
 * node-postgres's error for a query that waited its whole connect timeout in the queue of a full
 * pool: the database answers, every connection is busy. An overload, not an outage.
 */
const POOL_WAIT_TIMEOUT = 'timeout exceeded when trying to connect';

/** Whether an error is a wait for a free connection that ran out of time (the pool was full). */
export function isPoolWaitTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === POOL_WAIT_TIMEOUT;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
