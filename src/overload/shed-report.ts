import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionControl, type Criticality } from './admission-control';
import { overloadSettings, type OverloadSettings } from './overload.settings';

/**
 * What an operator sees of the requests refused as overloaded: the counter
 * `http_requests_shed_total` by route and criticality, the limit and the requests in flight as
 * gauges, and one `warn` line per `OVERLOAD_LOG_INTERVAL_MS` while requests are refused, with
 * their counts by route: never a line per refusal, which would add to the overload.
 */
@Injectable()
export class ShedReport implements OnApplicationShutdown {
  private readonly counter: Counter<'route' | 'criticality'>;
  private readonly intervalMs: number;
  private counts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    metrics: MetricsService,
    admission: AdmissionControl,
    @Inject(overloadSettings.KEY) settings: OverloadSettings,
    @InjectPinoLogger(ShedReport.name) private readonly logger: PinoLogger,
  ) {
    this.intervalMs = settings.OVERLOAD_LOG_INTERVAL_MS;
    this.counter = new Counter({
      name: 'http_requests_shed_total',
      help: 'Requests refused with 503 OVERLOADED before any work, by route pattern and criticality',
      labelNames: ['route', 'criticality'] as const,
      registers: [metrics.registry],
    });
    new Gauge({
      name: 'overload_concurrency_limit',
      help: 'The adaptive limit of API requests in flight at once, past which requests are shed',
      registers: [metrics.registry],
      collect() {
        this.set(admission.limit);
      },
    });
    new Gauge({
      name: 'overload_requests_in_flight',
      help: 'API requests admitted and not yet answered',
      registers: [metrics.registry],
      collect() {
        this.set(admission.inFlightCount);
      },
    });
  }

  /** One request refused; the interval's line is written at its end. */
  shed(route: string, criticality: Criticality): void {
    this.counter.inc({ route, criticality });
    this.counts.set(route, (this.counts.get(route) ?? 0) + 1);
    this.timer ??= setTimeout(() => this.flush(), this.intervalMs).unref();
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
    this.flush();
  }

  private flush(): void {
    this.timer = undefined;
    if (this.counts.size === 0) return;
    const byRoute = Object.fromEntries(this.counts);
    const total = [...this.counts.values()].reduce((sum, n) => sum + n, 0);
    this.counts = new Map();
    this.logger.warn(
      { shed: total, byRoute, intervalMs: this.intervalMs },
      'requests shed: the instance is overloaded',
    );
  }
}
