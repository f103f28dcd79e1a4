import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { Clock } from '../common/clock';
import { APPLICATION_NAME } from '../database/data-source-options';
import { listenerClientConfig, NotificationListener } from '../database/notification-listener';
import { type AuthSettings, authSettings } from './auth.settings';
import { KeyCache } from './key-cache';

/** Where the `api_keys` trigger announces a changed key's hash (migration ApiKeyChangesNotify). */
export const KEY_CHANGES_CHANNEL = 'api_key_changes';

/** The feed's connection in `pg_stat_activity`. */
export const KEY_CHANGES_APPLICATION_NAME = `${APPLICATION_NAME} key changes`;

/**
 * Heartbeats within KEY_CACHE_TTL_MS (one a second by default): the feed stays confirmed with room
 * to spare within that bound, however short it is set.
 */
const HEARTBEATS_PER_TTL = 5;

/**
 * The key changes feed: `LISTEN api_key_changes` on a connection of its own, which tells the
 * key cache at once which key changed in the database (issued, revoked, banned, unbanned, its
 * expiry moved), and whether it is listening at all: while it is, cached keys stay trusted for
 * minutes, and the set of the keys' hashes stays current; while it is not, cached keys are
 * trusted for KEY_CACHE_TTL_MS only, as before the feed existed.
 *
 * It connects in the background, so the service starts as it would without it; it reconnects by
 * itself (with backoff) after a loss, and closes at shutdown.
 */
@Injectable()
export class KeyChangesFeed implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly listener: NotificationListener;
  /** Whether it has listened since the start; whether it is down and said so. */
  private listened = false;
  private down = false;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly keys: KeyCache,
    @InjectPinoLogger(KeyChangesFeed.name) private readonly logger: PinoLogger,
    @Inject(authSettings.KEY) { KEY_CACHE_TTL_MS }: AuthSettings,
    clock: Clock,
  ) {
    this.listener = new NotificationListener({
      client: listenerClientConfig(
        dataSource.options as PostgresDataSourceOptions,
        KEY_CHANGES_APPLICATION_NAME,
      ),
      channel: KEY_CHANGES_CHANNEL,
      heartbeatIntervalMs: KEY_CACHE_TTL_MS / HEARTBEATS_PER_TTL,
      heartbeatTimeoutMs: KEY_CACHE_TTL_MS,
      retryDelayMs: { first: 250, max: 10_000 },
      now: () => clock.monotonic(),
      onNotification: (keyHash) => {
        keys.keyChanged(keyHash);
      },
      onListening: (since) => {
        keys.changesFeedListening(since);
        this.listening();
      },
      onConfirmed: (at) => {
        keys.changesFeedConfirmed(at);
      },
      onLost: (err) => {
        keys.changesFeedLost();
        this.down = true;
        this.logger.warn(
          { err },
          `key changes feed lost: cached keys are trusted for ${KEY_CACHE_TTL_MS / 1000} s only until it returns`,
        );
      },
      onAttemptFailed: (err, attempt) => {
        if (this.down) {
          this.logger.debug({ err, attempt }, 'key changes feed: could not reconnect yet');
          return;
        }
        this.down = true;
        this.logger.warn(
          { err },
          `key changes feed cannot connect: cached keys are trusted for ${KEY_CACHE_TTL_MS / 1000} s only until it does`,
        );
      },
    });
  }

  onApplicationBootstrap(): void {
    this.listener.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.keys.changesFeedLost();
    await this.listener.stop();
  }

  private listening(): void {
    if (!this.listened) {
      this.logger.info('key changes feed listening: changes to keys reach this instance at once');
    } else {
      this.logger.info('key changes feed is back: changes to keys reach this instance at once');
    }
    this.listened = true;
    this.down = false;
  }
}
