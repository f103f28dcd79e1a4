import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { poolCountsOf } from '../database/pool-counts';
import { SchemaVersion } from '../database/schema-version';
import { RequestMetrics } from './request-metrics';

/** The package's version (`package.json`, above `src/` and `dist/` alike). */
const RELEASE = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

/** Latency buckets in seconds: from a cached-looking 5 ms to a 100,000-order list. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The service's Prometheus metrics, in a registry of its own (not prom-client's global one), so
 * that every application instance, in a test too, counts only its own requests.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  private readonly rejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests rejected with 429 by the rate limiter, by plan',
    labelNames: ['plan'] as const,
    registers: [this.registry],
  });

  private readonly bans = new Counter({
    name: 'api_key_bans_total',
    help: 'API keys (or anonymous IPs) banned for sending on after 429s, by plan',
    labelNames: ['plan'] as const,
    registers: [this.registry],
  });

  private readonly redisFallbacks = new Counter({
    name: 'rate_limit_redis_fallbacks_total',
    help: 'Rate-limit decisions made with per-instance counters because Redis was unreachable',
    registers: [this.registry],
  });

  /** `http_requests_total` and `http_request_duration_seconds`: one record per request. */
  private readonly requests: RequestMetrics;
  private observed = 0;

  constructor(@InjectDataSource() dataSource: DataSource, schema: SchemaVersion) {
    // Registered here, after the counters above: the exposition's order.
    this.requests = new RequestMetrics(
      this.registry,
      { requests: 'http_requests_total', duration: 'http_request_duration_seconds' },
      {
        requests: 'HTTP requests answered, by method, route pattern and status',
        duration:
          'Time from request to the last byte of the response, by method, route pattern and status',
      },
      LATENCY_BUCKETS,
    );
    // Scraped before the DataSource is up or after it is closed: no pool to report.
    new Gauge({
      name: 'db_pool_connections',
      help: 'Connections of the PostgreSQL pool: total open, idle, and in use',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const counts = poolCountsOf(dataSource);
        if (!counts) return;
        this.set({ state: 'total' }, counts.total);
        this.set({ state: 'idle' }, counts.idle);
        this.set({ state: 'active' }, counts.total - counts.idle);
      },
    });
    new Gauge({
      name: 'db_pool_waiting_requests',
      help: 'Queries waiting for a free connection of the PostgreSQL pool',
      registers: [this.registry],
      collect() {
        const counts = poolCountsOf(dataSource);
        if (counts) this.set(counts.waiting);
      },
    });
    new Gauge({
      name: 'store_orders_build_info',
      help: "The release this instance runs (package version) and the database schema's latest applied migration",
      labelNames: ['version', 'schema'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        this.set({ version: RELEASE, schema: schema.latest }, 1);
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** Records one finished (or aborted) request. `route` is the pattern, never the raw path. */
  observeRequest(method: string, route: string, status: string, seconds: number): void {
    this.requests.observe(method, route, status, seconds);
    this.observed++;
  }

  /** Requests recorded so far: whether this instance is serving, for work that gives way to it. */
  get requestsObserved(): number {
    return this.observed;
  }

  /** One request rejected with 429 (rate limit exceeded or banned). */
  rateLimitRejected(plan: string): void {
    this.rejections.inc({ plan });
  }

  /** One key (or anonymous IP) banned. */
  keyBanned(plan: string): void {
    this.bans.inc({ plan });
  }

  /** One rate-limit decision made in process while Redis is unreachable (the fail-open policy). */
  rateLimitRedisFallback(): void {
    this.redisFallbacks.inc();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
