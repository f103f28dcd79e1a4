import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { Clock } from '../common/clock';
import { ActiveKey, ApiKeysRepository } from './api-keys.repository';
import { KEY_CACHE_MAX_ENTRIES } from './key-cache';

/**
 * `last_used_at` is written at most this often per key and instance: a busy key costs one UPDATE
 * a minute, never one per request (nor one per key cache period).
 */
export const LAST_USE_WRITE_INTERVAL_MS = 60_000;

/** Writes each key's `last_used_at`, in the background, at most once a minute per instance. */
@Injectable()
export class LastUseRecorder {
  /** When this instance last wrote each key's last use (ms since the epoch), by key id. */
  private readonly writtenAt = new LRUCache<string, number>({ max: KEY_CACHE_MAX_ENTRIES });

  /**
   * When each resolved key (the object the key cache holds) is next to be written: until then a
   * use costs one comparison. A key looked up again is a new object, checked against `writtenAt`.
   */
  private readonly dueAt = new WeakMap<ActiveKey, number>();

  constructor(
    private readonly store: ApiKeysRepository,
    private readonly clock: Clock,
    @InjectPinoLogger(LastUseRecorder.name) private readonly logger: PinoLogger,
  ) {}

  /** A request used this (valid, unexpired) key: writes its last use unless written within a minute. */
  used(key: ActiveKey): void {
    const now = this.clock.now();
    const due = this.dueAt.get(key);
    if (due !== undefined && now < due) return;
    const { keyId } = key;
    const written = this.writtenAt.get(keyId);
    if (written !== undefined && now - written < LAST_USE_WRITE_INTERVAL_MS) {
      this.dueAt.set(key, written + LAST_USE_WRITE_INTERVAL_MS);
      return;
    }
    this.writtenAt.set(keyId, now);
    this.dueAt.set(key, now + LAST_USE_WRITE_INTERVAL_MS);
    this.store.touch(keyId).catch((err: unknown) => {
      this.logger.warn({ err, keyId }, 'could not record last use of key');
    });
  }
}
