import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { ServerTimeouts } from '../platform/client-errors';
import { EnvironmentVariables, LogLevel } from './environment';

export interface ShutdownSettings {
  drainDelayMs: number;
  timeoutMs: number;
}

export interface DatabaseSettings {
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  poolSize: number;
}

/** Typed, validated configuration. Read settings through these accessors, never `process.env`. */
@Injectable()
export class AppConfig {
  constructor(private readonly config: ConfigService<EnvironmentVariables, true>) {}

  get port(): number {
    return this.config.get('PORT', { infer: true });
  }

  /** The address the API and metrics listeners bind; undefined: every interface. */
  get host(): string | undefined {
    return this.config.get('HOST', { infer: true });
  }

  get redisUrl(): string | undefined {
    return this.config.get('REDIS_URL', { infer: true });
  }

  get publicBaseUrl(): string | undefined {
    return this.config.get('PUBLIC_BASE_URL', { infer: true });
  }

  get stagingBaseUrl(): string | undefined {
    return this.config.get('STAGING_BASE_URL', { infer: true });
  }

  get trustProxy(): string | undefined {
    return this.config.get('TRUST_PROXY', { infer: true });
  }

  get banAfter(): number {
    return this.config.get('RATE_LIMIT_BAN_AFTER', { infer: true });
  }

  get banSeconds(): number {
    return this.config.get('RATE_LIMIT_BAN_SECONDS', { infer: true });
  }

  /** Anonymous trackers the in-process rate limiter keeps at once. */
  get anonymousTrackers(): number {
    return this.config.get('RATE_LIMIT_ANONYMOUS_TRACKERS', { infer: true });
  }

  get logLevel(): LogLevel {
    return this.config.get('LOG_LEVEL', { infer: true });
  }

  /** Whether responses are compressed for clients that accept it (COMPRESSION, default on). */
  get compression(): boolean {
    return this.config.get('COMPRESSION', { infer: true }) === 'on';
  }

  /** Port of the separate Prometheus listener; undefined: metrics are not served. */
  get metricsPort(): number | undefined {
    return this.config.get('METRICS_PORT', { infer: true });
  }

  get shutdown(): ShutdownSettings {
    return {
      drainDelayMs: this.config.get('SHUTDOWN_DRAIN_DELAY_MS', { infer: true }),
      timeoutMs: this.config.get('SHUTDOWN_TIMEOUT_MS', { infer: true }),
    };
  }

  get serverTimeouts(): ServerTimeouts {
    return {
      headersMs: this.config.get('HTTP_HEADERS_TIMEOUT_MS', { infer: true }),
      requestMs: this.config.get('HTTP_REQUEST_TIMEOUT_MS', { infer: true }),
      keepAliveMs: this.config.get('HTTP_KEEP_ALIVE_TIMEOUT_MS', { infer: true }),
    };
  }

  /** How long a streamed response waits for a client that takes none of it (HTTP_STALL_TIMEOUT_MS). */
  get stallTimeoutMs(): number {
    return this.config.get('HTTP_STALL_TIMEOUT_MS', { infer: true });
  }

  get database(): DatabaseSettings {
    return {
      connectTimeoutMs: this.config.get('DATABASE_CONNECT_TIMEOUT_MS', { infer: true }),
      statementTimeoutMs: this.config.get('DATABASE_STATEMENT_TIMEOUT_MS', { infer: true }),
      poolSize: this.config.get('DATABASE_POOL_SIZE', { infer: true }),
    };
  }
}
