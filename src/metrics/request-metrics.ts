import { Counter, Histogram, type Registry } from 'prom-client';

type RequestLabel = 'method' | 'route' | 'status';

const LABEL_NAMES: readonly RequestLabel[] = ['method', 'route', 'status'];

/** One method, route pattern and status: its children of the counter and of the histogram. */
interface RequestSeries {
  requests: Counter.Internal;
  duration: Histogram.Internal<RequestLabel>;
}

/**
 * `http_requests_total` (a counter) and `http_request_duration_seconds` (a histogram), by method,
 * route pattern and status: prom-client's own Counter and Histogram. Recorded by the request
 * observer once per request; each series' children are bound on its first request and kept, so
 * a later one is found with three map lookups. Series are bounded like any metric's labels
 * (route patterns, never raw paths).
 */
export class RequestMetrics {
  private readonly requests: Counter<RequestLabel>;
  private readonly duration: Histogram<RequestLabel>;
  private readonly series = new Map<string, Map<string, Map<string, RequestSeries>>>();

  constructor(
    registry: Registry,
    names: { requests: string; duration: string },
    help: { requests: string; duration: string },
    /** Upper bounds in seconds, ascending; `+Inf` is implied. */
    buckets: readonly number[],
  ) {
    this.requests = new Counter({
      name: names.requests,
      help: help.requests,
      labelNames: LABEL_NAMES,
      registers: [registry],
    });
    this.duration = new Histogram({
      name: names.duration,
      help: help.duration,
      labelNames: LABEL_NAMES,
      buckets: [...buckets],
      registers: [registry],
    });
  }

  /** One finished (or aborted) request. */
  observe(method: string, route: string, status: string, seconds: number): void {
    const series = this.seriesOf(method, route, status);
    series.requests.inc();
    series.duration.observe(seconds);
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
        duration: this.duration.labels(method, route, status),
      };
      byStatus.set(status, series);
    }
    return series;
  }
}
