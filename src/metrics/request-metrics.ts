import type { Metric, Registry } from 'prom-client';

type RequestLabels = { method: string; route: string; status: string };

/** One method, route pattern and status: its requests and their latency histogram. */
class RequestSeries {
  count = 0;
  sum = 0;
  /** Per bucket, not cumulative: the observations at most its bound and above the previous one. */
  readonly perBucket: number[];

  constructor(
    readonly labels: RequestLabels,
    buckets: number,
  ) {
    this.perBucket = new Array<number>(buckets).fill(0);
  }
}

/** One line of the exposition, as prom-client's metrics give it to their registry. */
interface ExposedValue {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** What a metric's `get()` answers the registry. */
interface Exposition {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: ExposedValue[];
}

/** What the registry asks of a metric it exposes (prom-client's own metrics have the same). */
interface ExposedMetric extends Omit<Exposition, 'values'> {
  get(): Promise<Exposition>;
  reset(): void;
}

/**
 * `http_requests_total` (a counter) and `http_request_duration_seconds` (a histogram), by method,
 * route pattern and status, exposed by a prom-client registry like its own metrics, in the same
 * text. Recorded by the request observer once per request: a series is found with three map
 * lookups and counted with a few additions. prom-client's `labels(...).observe()` validates and
 * hashes the labels again on every call even on a bound child (about 1 µs a request on its own,
 * several in the service's hot path, docs/performance.md); series here are bounded like any
 * metric's labels (route patterns, never raw paths).
 */
export class RequestMetrics {
  private readonly series = new Map<string, Map<string, Map<string, RequestSeries>>>();
  /** The same series in the order they were first seen: the order of the exposition. */
  private readonly seen: RequestSeries[] = [];

  constructor(
    private readonly names: { requests: string; duration: string },
    private readonly help: { requests: string; duration: string },
    /** Upper bounds in seconds, ascending; `+Inf` is implied. */
    private readonly bounds: readonly number[],
  ) {}

  /** Adds both metrics to the registry's exposition. */
  registerIn(registry: Registry): void {
    const metrics = [
      this.metric('requests', 'counter', (s) => this.counterValues(s)),
      this.metric('duration', 'histogram', (s) => this.histogramValues(s)),
    ];
    // The registry reads a metric only through `name`, `help`, `type`, `aggregator`, `get()`
    // and `reset()`; its type names prom-client's classes alone.
    for (const metric of metrics) registry.registerMetric(metric as unknown as Metric);
  }

  private metric(
    which: 'requests' | 'duration',
    type: Exposition['type'],
    valuesOf: (series: RequestSeries) => ExposedValue[],
  ): ExposedMetric {
    const metric: ExposedMetric = {
      name: this.names[which],
      help: this.help[which],
      type,
      aggregator: 'sum',
      get: () => Promise.resolve(this.exposed(metric, valuesOf)),
      reset: () => this.reset(),
    };
    return metric;
  }

  private reset(): void {
    this.series.clear();
    this.seen.length = 0;
  }

  /** One finished (or aborted) request. */
  observe(method: string, route: string, status: string, seconds: number): void {
    const series = this.seriesOf(method, route, status);
    series.count++;
    series.sum += seconds;
    const { bounds } = this;
    let bucket = 0;
    while (bucket < bounds.length && seconds > bounds[bucket]) bucket++;
    if (bucket < bounds.length) series.perBucket[bucket]++;
  }

  private seriesOf(method: string, route: string, status: string): RequestSeries {
    let byRoute = this.series.get(method);
    if (!byRoute)
      this.series.set(method, (byRoute = new Map<string, Map<string, RequestSeries>>()));
    let byStatus = byRoute.get(route);
    if (!byStatus) byRoute.set(route, (byStatus = new Map<string, RequestSeries>()));
    let series = byStatus.get(status);
    if (!series) {
      series = new RequestSeries({ method, route, status }, this.bounds.length);
      byStatus.set(status, series);
      this.seen.push(series);
    }
    return series;
  }

  private exposed(
    metric: ExposedMetric,
    valuesOf: (series: RequestSeries) => ExposedValue[],
  ): Exposition {
    const values = this.seen.flatMap(valuesOf);
    return {
      name: metric.name,
      help: metric.help,
      type: metric.type,
      aggregator: metric.aggregator,
      values,
    };
  }

  private counterValues(series: RequestSeries): ExposedValue[] {
    return [{ labels: series.labels, value: series.count }];
  }

  /** As prom-client writes a histogram: cumulative buckets (`le` first), `+Inf`, sum, count. */
  private histogramValues(series: RequestSeries): ExposedValue[] {
    const name = this.names.duration;
    let cumulative = 0;
    const values: ExposedValue[] = this.bounds.map((bound, i) => {
      cumulative += series.perBucket[i];
      return {
        metricName: `${name}_bucket`,
        labels: { le: bound, ...series.labels },
        value: cumulative,
      };
    });
    values.push({
      metricName: `${name}_bucket`,
      labels: { le: '+Inf', ...series.labels },
      value: series.count,
    });
    return [
      ...values,
      { metricName: `${name}_sum`, labels: series.labels, value: series.sum },
      { metricName: `${name}_count`, labels: series.labels, value: series.count },
    ];
  }
}
