import { connect, createServer, type Server, type Socket } from 'node:net';

/** Startup-phase requests that another startup-phase message follows (SSLRequest, GSSENCRequest). */
const ENCRYPTION_REQUESTS = new Set([80877103, 80877104]);

/**
 * Reads the frontend side of a PostgreSQL connection (protocol 3.0) and reports the text of each
 * statement sent: a simple query (`Q`) or a prepared one (`P`); and of each statement run: a
 * simple query, or a prepared one bound to be executed (`B`, by its name on this connection), as
 * pg sends a named statement's text once per connection and only binds it after that.
 */
function statementReader(
  onStatement: (text: string) => void,
  onExecution: (text: string) => void,
): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  let started = false;
  const prepared = new Map<string, string>();
  const cString = (message: Buffer, at: number): string =>
    message.toString('utf8', at, message.indexOf(0, at));
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      // Startup-phase messages have no type byte: their length comes first.
      const lengthAt = started ? 1 : 0;
      if (buffered.length < lengthAt + 4) return;
      const total = lengthAt + buffered.readInt32BE(lengthAt);
      if (buffered.length < total) return;
      const message = buffered.subarray(0, total);
      buffered = buffered.subarray(total);
      if (!started) {
        started = !ENCRYPTION_REQUESTS.has(message.readInt32BE(4));
        continue;
      }
      const type = String.fromCharCode(message[0]);
      if (type === 'Q') {
        const text = message.toString('utf8', 5, total - 1);
        onStatement(text);
        onExecution(text);
      }
      if (type === 'P') {
        const name = cString(message, 5);
        const text = cString(message, 5 + Buffer.byteLength(name) + 1);
        prepared.set(name, text);
        onStatement(text);
      }
      if (type === 'B') {
        const portal = cString(message, 5);
        const text = prepared.get(cString(message, 5 + Buffer.byteLength(portal) + 1));
        if (text !== undefined) onExecution(text);
      }
    }
  };
}

/**
 * A TCP proxy on 127.0.0.1 in front of a real PostgreSQL that counts the statements its clients
 * send through it, by their text: what the database is asked, counted on the wire (not a mock, and
 * not subject to the delay of PostgreSQL's own statistics). Point the app's `DATABASE_URL` at
 * {@link url}.
 */
export class PostgresStatementCounter {
  private readonly counts = new Map<string, number>();
  private readonly executions = new Map<string, number>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    /** `databaseUrl`, through the proxy. */
    readonly url: string,
  ) {}

  static async start(databaseUrl: string): Promise<PostgresStatementCounter> {
    const target = new URL(databaseUrl);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const address = server.address();
    const proxied = new URL(databaseUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(typeof address === 'object' && address ? address.port : 0);
    const counter = new PostgresStatementCounter(server, proxied.toString());
    server.on('connection', (client) =>
      counter.relay(client, target.hostname, Number(target.port || 5432)),
    );
    return counter;
  }

  /** Statements of exactly this text sent so far. */
  count(text: string): number {
    return this.counts.get(text) ?? 0;
  }

  /** Runs so far of the statement of exactly this text, prepared or simple, on any connection. */
  executed(text: string): number {
    return this.executions.get(text) ?? 0;
  }

  /** Statements sent so far whose text matches `pattern`, whatever their exact text. */
  countMatching(pattern: RegExp): number {
    let total = 0;
    for (const [text, count] of this.counts) if (pattern.test(text)) total += count;
    return total;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket, host: string, port: number): void {
    const upstream = connect({ host, port });
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    }
    const read = statementReader(
      (text) => this.counts.set(text, this.count(text) + 1),
      (text) => this.executions.set(text, this.executed(text) + 1),
    );
    client.on('data', read);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}
