import { Injectable, OnModuleInit, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorFunction,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { RedisHealthIndicator } from './redis.health';
import { ShutdownState } from './shutdown-state';

/** Longest one dependency check may take before readiness calls it down. */
export const READINESS_CHECK_TIMEOUT_MS = 2000;

/**
 * How long a check's outcome answers readiness after it is known: the dependencies are checked
 * (one `SELECT 1`, one Redis `PING`) at most once per interval, however often readiness is asked.
 * An outage or a recovery shows within this interval plus the check's timeout.
 */
export const READINESS_INTERVAL_MS = 1000;

/** A check of the dependencies: in flight until `settledAt` is set. */
interface Check {
  outcome: Promise<HealthCheckResult>;
  settledAt?: number;
}

/**
 * Whether this instance can serve: the database answers, Redis too when configured, and it is not
 * shutting down. Asked by `GET /health/ready` and, as the `app_ready` gauge, by every Prometheus
 * scrape: nothing in the compose stack probes readiness (nginx only retries), so an alert on it
 * needs the metric.
 *
 * The dependencies are not checked per request: probes from every load balancer and orchestrator,
 * or a client flooding the public endpoint, would each cost the database a query (and a pooled
 * connection) that other requests wait for. Callers share the check in flight, and its outcome for
 * {@link READINESS_INTERVAL_MS} after it settles. Shutting down is read on every call.
 */
@Injectable()
export class Readiness implements OnModuleInit {
  private latest?: Check;

  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly redis: RedisHealthIndicator,
    readonly shutdown: ShutdownState,
    private readonly metrics: MetricsService,
    @InjectPinoLogger(Readiness.name) private readonly logger: PinoLogger,
  ) {}

  /**
   * Terminus' result of the latest check (started now if the last one settled more than an
   * interval ago); throws its ServiceUnavailableException when a dependency is down.
   */
  checkDependencies(): Promise<HealthCheckResult> {
    const latest = this.latest;
    if (
      latest &&
      (latest.settledAt === undefined ||
        performance.now() - latest.settledAt < READINESS_INTERVAL_MS)
    ) {
      return latest.outcome;
    }
    const check: Check = { outcome: this.check() };
    const settled = (): void => {
      check.settledAt = performance.now();
    };
    check.outcome.then(settled, settled);
    this.latest = check;
    return check.outcome;
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

  /** One check of every dependency; a failed one is logged here, once, not per caller. */
  private async check(): Promise<HealthCheckResult> {
    const checks: HealthIndicatorFunction[] = [
      () => this.database.pingCheck('database').withTimeout(READINESS_CHECK_TIMEOUT_MS),
    ];
    if (this.redis.isConfigured) {
      checks.push(() => this.redis.pingCheck('redis', READINESS_CHECK_TIMEOUT_MS));
    }
    try {
      return await this.health.check(checks);
    } catch (error) {
      if (error instanceof ServiceUnavailableException) {
        const result = error.getResponse() as Partial<HealthCheckResult>;
        this.logger.warn({ health: result }, `not ready: ${downIn(result).join(', ')} down`);
      }
      throw error;
    }
  }
}

/** The dependencies a failed check found down. */
export function downIn(result: Partial<HealthCheckResult>): string[] {
  return Object.keys(result.error ?? {});
}
