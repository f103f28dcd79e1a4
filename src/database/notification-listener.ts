import { randomBytes } from 'node:crypto';
import { Client, type ClientConfig, escapeIdentifier } from 'pg';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';

export interface NotificationListenerOptions {
  /** The connection's settings: {@link listenerClientConfig} of the application's DataSource. */
  client: ClientConfig;
  channel: string;
  /**
   * This often, a notification to itself (a heartbeat) proves that notifications still arrive:
   * when it does, every notification sent before it has arrived (PostgreSQL delivers them in
   * the order of their commits).
   */
  heartbeatIntervalMs: number;
  /** A heartbeat that has not come back after this long counts as a lost connection. */
  heartbeatTimeoutMs: number;
  /** Waits between attempts to connect: doubling from the first to the last, with jitter. */
  retryDelayMs: { first: number; max: number };
  /** The instants `onListening` and `onConfirmed` report, in ms: the owner's clock, that never jumps. */
  now(): number;
  /** A notification on the channel, in the order PostgreSQL sent it. */
  onNotification(payload: string): void;
  /**
   * Listening (again), and its first heartbeat came back. `since` (`now()`): every
   * notification of a transaction that commits from then on will be received; those sent before
   * were not.
   */
  onListening(since: number): void;
  /**
   * A heartbeat came back: every notification of a transaction committed before `sentAt`
   * (`now()` when it was sent) has been received.
   */
  onConfirmed(sentAt: number): void;
  /** The connection that was listening is gone: called once per loss, then it reconnects. */
  onLost(error: unknown): void;
  /** An attempt to connect (and listen) failed; another follows. */
  onAttemptFailed(error: unknown, attempt: number): void;
}

/**
 * The settings of the application's DataSource (its URL, and the connect timeout, statement timeout
 * and keep-alive of `extra`: all that `dataSourceOptions` sets) for one more connection, outside its
 * pool, named `applicationName` so that an operator can tell it apart in `pg_stat_activity`.
 */
export function listenerClientConfig(
  options: PostgresDataSourceOptions,
  applicationName: string,
): ClientConfig {
  return {
    // The pool's settings are a ClientConfig plus pool-only keys, which a Client ignores.
    ...(options.extra as ClientConfig | undefined),
    connectionString: options.url,
    application_name: applicationName,
  };
}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * `LISTEN` on one channel, on a dedicated PostgreSQL connection that it keeps: a lost connection
 * (an error, the server closing it, a heartbeat that does not come back) is reported once and
 * replaced, with backoff, until {@link stop}. Never throws, never keeps the process alive: its
 * timers are unref'd, and `stop()` returns within a second whatever state the connection is in.
 *
 * The heartbeat is a notification on a channel of this listener's own, not a query: it proves
 * that notifications arrive, not only that the connection answers (through a proxy that pools
 * transactions, for one, queries are answered but notifications are lost).
 */
export class NotificationListener {
  /** The connection being set up or listening; undefined between attempts and once stopped. */
  private client: Client | undefined;
  /** When the current connection's LISTEN was sent. */
  private listenSentAt = 0;
  /** Its first heartbeat has come back. */
  private listening = false;
  private stopped = false;
  private attempt = 0;
  /** The next attempt to connect, or the next heartbeat. */
  private timer: NodeJS.Timeout | undefined;
  /** The heartbeat under way, if any. */
  private heartbeat: { payload: string; sentAt: number; timeout: NodeJS.Timeout } | undefined;
  private heartbeats = 0;
  /** A channel of this listener's own: no other listener hears its heartbeats. */
  private readonly heartbeatChannel: string;

  constructor(private readonly options: NotificationListenerOptions) {
    const suffix = randomBytes(8).toString('hex');
    this.heartbeatChannel = `${options.channel}_heartbeat_${suffix}`;
  }

  /** Connects in the background: the caller never waits for (or fails with) the database. */
  start(): void {
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.drop();
    // A connection that the network lost without a word may never answer a goodbye.
    if (client) await Promise.race([client.end().catch(() => undefined), sleep(1_000)]);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client(this.options.client);
    this.client = client;
    client.on('error', (error) => {
      this.lose(client, error);
    });
    client.on('end', () => {
      this.lose(client, new Error('the connection was closed'));
    });
    client.on('notification', ({ channel, payload }) => {
      if (this.client !== client || payload === undefined) return;
      if (channel === this.options.channel) this.options.onNotification(payload);
      else if (channel === this.heartbeatChannel) this.heartbeatCameBack(client, payload);
    });
    try {
      await client.connect();
      this.listenSentAt = this.options.now();
      await client.query(
        `LISTEN ${escapeIdentifier(this.options.channel)}; LISTEN ${escapeIdentifier(this.heartbeatChannel)}`,
      );
      // Listening once a heartbeat has come back: notifications do arrive on this connection.
      if (this.client === client) this.sendHeartbeat(client);
    } catch (error) {
      this.lose(client, error);
    }
  }

  private scheduleHeartbeat(client: Client): void {
    this.timer = setTimeout(() => {
      this.sendHeartbeat(client);
    }, this.options.heartbeatIntervalMs);
    this.timer.unref();
  }

  private sendHeartbeat(client: Client): void {
    const payload = String(++this.heartbeats);
    const timeout = setTimeout(() => {
      this.lose(
        client,
        new Error(`a heartbeat did not come back in ${this.options.heartbeatTimeoutMs} ms`),
      );
    }, this.options.heartbeatTimeoutMs);
    timeout.unref();
    this.heartbeat = { payload, sentAt: this.options.now(), timeout };
    client
      .query('SELECT pg_notify($1, $2)', [this.heartbeatChannel, payload])
      .catch((error: unknown) => {
        this.lose(client, error);
      });
  }

  private heartbeatCameBack(client: Client, payload: string): void {
    const { heartbeat } = this;
    if (heartbeat?.payload !== payload) return;
    clearTimeout(heartbeat.timeout);
    this.heartbeat = undefined;
    if (!this.listening) {
      this.listening = true;
      this.attempt = 0;
      this.options.onListening(this.listenSentAt);
    }
    this.options.onConfirmed(heartbeat.sentAt);
    this.scheduleHeartbeat(client);
  }

  /** Forgets the current connection and whatever was scheduled for it. */
  private drop(): void {
    this.client = undefined;
    this.listening = false;
    clearTimeout(this.timer);
    clearTimeout(this.heartbeat?.timeout);
    this.heartbeat = undefined;
  }

  /** Drops `client` (once, if it is still the current one) and schedules the next attempt. */
  private lose(client: Client, error: unknown): void {
    if (this.client !== client) return;
    const wasListening = this.listening;
    this.drop();
    client.end().catch(() => undefined);
    if (wasListening) this.options.onLost(error);
    else this.options.onAttemptFailed(error, this.attempt + 1);
    if (this.stopped) return;
    const { first, max } = this.options.retryDelayMs;
    const delay = Math.min(max, first * 2 ** this.attempt) * (0.5 + Math.random() / 2);
    this.attempt++;
    this.timer = setTimeout(() => void this.connect(), delay);
    this.timer.unref();
  }
}
