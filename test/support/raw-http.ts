import { connect } from 'node:net';

export interface RawAnswer {
  /** Everything the server sent, as text. */
  text: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from connecting to the first byte of the answer (-1: none came). */
  answeredAfterMs: number;
  /** Bytes the client had written when the answer came, and when the connection ended. */
  sentBeforeAnswer: number;
  sentTotal: number;
  /** The server ended the connection (not the client's own deadline). */
  closedByServer: boolean;
}

export interface RawOptions {
  /** After `head`, keep writing this chunk for as long as the server lets it (back-pressure). */
  keepSending?: Buffer;
  /** Give up (and destroy the socket) after this long. */
  deadlineMs?: number;
}

/**
 * Writes `head` as it is on a new TCP connection (node:net, no HTTP client to tidy it up) and
 * collects whatever comes back until the server closes the connection or the deadline passes:
 * for what Node's HTTP parser sees before Express does.
 */
export function rawExchange(
  url: string,
  head: string,
  options: RawOptions = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const deadlineMs = options.deadlineMs ?? 10_000;
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    let sent = 0;
    let sentBeforeAnswer = -1;
    let answeredAfterMs = -1;
    let closedByServer = false;
    let done = false;

    const pump = (): void => {
      const chunk = options.keepSending;
      if (!chunk) return;
      while (!done && !socket.destroyed && socket.writable) {
        sent += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon > 0)
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        text,
        status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0),
        headers,
        body: rest.join('\r\n\r\n'),
        answeredAfterMs,
        sentBeforeAnswer,
        sentTotal: sent,
        closedByServer,
      });
    };
    const timer = setTimeout(finish, deadlineMs);

    socket.on('connect', () => {
      sent += Buffer.byteLength(head);
      socket.write(head);
      pump();
    });
    socket.on('data', (chunk: Buffer) => {
      if (answeredAfterMs < 0) {
        answeredAfterMs = Date.now() - started;
        sentBeforeAnswer = sent;
      }
      chunks.push(chunk);
    });
    // The server's FIN, or its reset while the client was still writing: either way, it closed.
    socket.on('end', () => {
      closedByServer = true;
      finish();
    });
    socket.on('error', () => {
      closedByServer = true;
      finish();
    });
    socket.on('close', finish);
  });
}
