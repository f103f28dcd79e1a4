import { randomUUID } from 'node:crypto';
import { type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';

/** The HTTP server's timeouts (ms): `HTTP_*_TIMEOUT_MS` in the configuration. */
export interface ServerTimeouts {
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
}

/**
 * How often Node looks for requests past `headersTimeout`/`requestTimeout` (its default is 30 s,
 * which would let a 10 s timeout run to 40 s). Read by Node when the server starts listening.
 */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** The error a Node `clientError` carries: a parser code (HPE_*) or a timeout (ERR_HTTP_*). */
type ClientError = Error & { code?: string };

/** The answer to one of those errors, by its code: the status and the JSON body. */
export type ClientErrorAnswer = (code: string | undefined) => { status: number; body: string };

/** The headers every answer written here carries, beside its length and request id. */
const FIXED_HEADERS =
  'Content-Type: application/json; charset=utf-8\r\n' +
  'Connection: close\r\n' +
  'Cache-Control: no-store\r\n' +
  "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n" +
  'X-Content-Type-Options: nosniff\r\n' +
  'X-Frame-Options: DENY\r\n';

/**
 * The response Node's server is writing on `socket`, if a request is in flight there. Node keeps
 * it as the socket's private `_httpMessage` and has no public accessor; tracking it from the
 * `request` event instead would cost a listener and a map entry per request, for the rare request
 * whose body times out. Checked by test/platform.e2e-spec.ts (docs/upgrading.md).
 */
function responseInFlight(socket: Duplex): ServerResponse | null | undefined {
  return (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
}

/**
 * Node's HTTP layer answers what it cannot hand to Express (a malformed request line or header,
 * conflicting lengths, headers over its limit, a request past the server's timeouts) with a bare
 * status line and nothing else. This answers them as every other error (`answerFor` gives the
 * status and body), with an `X-Request-Id`, `Connection: close`, and one log line. Its timeouts
 * are set here too, as they decide when such a 408 is sent.
 */
export function answerClientErrors(
  server: Server,
  timeouts: ServerTimeouts,
  log: Logger,
  answerFor: ClientErrorAnswer,
): void {
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;
  server.keepAliveTimeout = timeouts.keepAliveMs;
  (server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.min(
    TIMEOUT_CHECK_INTERVAL_MS,
    timeouts.headersMs,
  );

  server.on('clientError', (error: ClientError, socket: Duplex) => {
    // A client that went away, or a socket already answered: nothing can be sent.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, body } = answerFor(error.code);
    // A request Express is already serving (its body was too slow): answered through its own
    // response, so that it keeps its request id and is logged once, by the request observer.
    const inFlight = responseInFlight(socket);
    if (inFlight) {
      if (inFlight.headersSent) {
        socket.destroy();
        return;
      }
      inFlight.statusCode = status;
      inFlight.setHeader('Connection', 'close');
      inFlight.setHeader('Content-Type', 'application/json; charset=utf-8');
      inFlight.end(body);
      return;
    }
    const id = randomUUID();
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${FIXED_HEADERS}` +
        `X-Request-Id: ${id}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      // Whatever the client still sends is not read.
      () => socket.destroy(),
    );
    log.warn(
      {
        req: { id, remoteAddress: (socket as { remoteAddress?: string }).remoteAddress },
        res: { statusCode: status },
        reason: error.code ?? error.message,
      },
      'request rejected by the HTTP parser',
    );
  });
}
