import { Injectable, OnModuleInit } from '@nestjs/common';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorFunction,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { RedisHealthIndicator } from './redis.health';
import { ShutdownState } from './shutdown-state';

/** Longest one dependency check may take before readiness calls it down. */
export const READINESS_CHECK_TIMEOUT_MS = 2000;

/**
 * Whether this instance can serve: the database answers, Redis too when configured, and it is not
 * shutting down. Asked by `GET /health/ready` and, as the `app_ready` gauge, by every Prometheus
 * scrape: nothing in the compose stack probes readiness (nginx only retries), so an alert on it
 * needs the metric.
 */
@Injectable()
export class Readiness implements OnModuleInit {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly redis: RedisHealthIndicator,
    readonly shutdown: ShutdownState,
    private readonly metrics: MetricsService,
  ) {}

  /** Terminus' result; throws its ServiceUnavailableException when a dependency is down. */
  checkDependencies(): Promise<HealthCheckResult> {
    const checks: HealthIndicatorFunction[] = [
      () => this.database.pingCheck('database').withTimeout(READINESS_CHECK_TIMEOUT_MS),
    ];
    if (this.redis.isConfigured) {
      checks.push(() => this.redis.pingCheck('redis', READINESS_CHECK_TIMEOUT_MS));
    }
    return this.health.check(checks);
  }

  async isReady(): Promise<boolean> {
    if (this.shutdown.isShuttingDown) return false;
    return this.checkDependencies().then(
      () => true,
      () => false,
    );
  }

  onModuleInit(): void {
    const isReady = (): Promise<boolean> => this.isReady();
    new Gauge({
      name: 'app_ready',
      help: 'Whether this instance is ready to serve (what GET /health/ready answers 200 for): 1 or 0',
      registers: [this.metrics.registry],
      async collect() {
        this.set((await isReady()) ? 1 : 0);
      },
    });
  }
}
