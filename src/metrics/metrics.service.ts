import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { pgPoolOf } from '../database/pg-pool';

/** Latency buckets in seconds: from a cached-looking 5 ms to a 100,000-order list. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A route's counter and histogram for one method and status, bound once (`labels()`). */
interface RequestSeries {
  requests: { inc(): void };
  latency: { observe(seconds: number): void };
}

/**
 * The service's Prometheus metrics, in a registry of its own (not prom-client's global one), so
 * that every application instance, in a test too, counts only its own requests.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to the last byte of the response, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

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

  /**
   * Bound series by method, route pattern and status: a request finds its series with three map
   * lookups, instead of building a labels object for each of the two metrics. Bounded like the
   * metrics themselves: routes are patterns, never raw paths.
   */
  private readonly series = new Map<string, Map<string, Map<string, RequestSeries>>>();

  constructor(@InjectDataSource() dataSource: DataSource) {
    const pool = (): Pool | undefined => pgPoolOf(dataSource);
    new Gauge({
      name: 'db_pool_connections',
      help: 'Connections of the PostgreSQL pool: total open, idle, and in use',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const p = pool();
        if (!p) return;
        this.set({ state: 'total' }, p.totalCount);
        this.set({ state: 'idle' }, p.idleCount);
        this.set({ state: 'active' }, p.totalCount - p.idleCount);
      },
    });
    new Gauge({
      name: 'db_pool_waiting_requests',
      help: 'Queries waiting for a free connection of the PostgreSQL pool',
      registers: [this.registry],
      collect() {
        const p = pool();
        if (p) this.set(p.waitingCount);
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** Records one finished (or aborted) request. `route` is the pattern, never the raw path. */
  observeRequest(method: string, route: string, status: string, seconds: number): void {
    const series = this.seriesOf(method, route, status);
    series.requests.inc();
    series.latency.observe(seconds);
  }

  private seriesOf(method: string, route: string, status: string): RequestSeries {
    let byRoute = this.series.get(method);
    if (!byRoute)
      this.series.set(method, (byRoute = new Map<string, Map<string, RequestSeries>>()));
    let byStatus = byRoute.get(route);
    if (!byStatus) byRoute.set(route, (byStatus = new Map<string, RequestSeries>()));
    let series = byStatus.get(status);
    if (!series) {
      series = {
        requests: this.requests.labels(method, route, status),
        latency: this.latency.labels(method, route, status),
      };
      byStatus.set(status, series);
    }
    return series;
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
