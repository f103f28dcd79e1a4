import { Counter, Histogram, Registry } from 'prom-client';
import { RequestMetrics } from './request-metrics';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const NAMES = { requests: 'http_requests_total', duration: 'http_request_duration_seconds' };
const HELP = { requests: 'requests help', duration: 'duration help' };

/** The same observations through prom-client's own Counter and Histogram. */
function promClientOf(observations: [string, string, string, number][]): Registry {
  const registry = new Registry();
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: NAMES.requests,
    help: HELP.requests,
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: NAMES.duration,
    help: HELP.duration,
    labelNames,
    buckets: BUCKETS,
    registers: [registry],
  });
  for (const [method, route, status, seconds] of observations) {
    requests.labels(method, route, status).inc();
    duration.labels(method, route, status).observe(seconds);
  }
  return registry;
}

function requestMetricsOf(observations: [string, string, string, number][]): Registry {
  const registry = new Registry();
  const metrics = new RequestMetrics(registry, NAMES, HELP, BUCKETS);
  for (const observation of observations) metrics.observe(...observation);
  return registry;
}

describe('RequestMetrics', () => {
  const observations: [string, string, string, number][] = [
    ['GET', '/v1/store/orders', '200', 0.0031],
    ['GET', '/v1/store/orders', '200', 0.005],
    ['GET', '/v1/store/orders', '200', 0.0072],
    ['GET', '/v1/store/orders', '200', 31],
    ['DELETE', '/v1/store/orders/:orderId', '204', 0.0004],
    ['DELETE', '/v1/store/orders/:orderId', '409', 1],
    ['GET', 'unmatched', '404', 0.26],
    ['GET', '/v1/store/orders', 'aborted', 2.4],
  ];

  it('exposes the same text as prom-client’s Counter and Histogram given the same requests', async () => {
    expect(await requestMetricsOf(observations).metrics()).toBe(
      await promClientOf(observations).metrics(),
    );
  });

  it('exposes the same in the OpenMetrics format too', async () => {
    const ours = requestMetricsOf(observations);
    const theirs = promClientOf(observations);
    // The type of a registry names its content type; either can be set at run time.
    const openMetrics =
      Registry.OPENMETRICS_CONTENT_TYPE as typeof Registry.PROMETHEUS_CONTENT_TYPE;
    ours.setContentType(openMetrics);
    theirs.setContentType(openMetrics);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('exposes the same JSON (but for exemplars, which it has none of), and nothing once reset', async () => {
    const ours = requestMetricsOf(observations);
    const withoutExemplars = (json: unknown): unknown =>
      JSON.parse(
        JSON.stringify(json, (key, value: unknown) => (key === 'exemplar' ? undefined : value)),
      );
    expect(withoutExemplars(await ours.getMetricsAsJSON())).toEqual(
      withoutExemplars(await promClientOf(observations).getMetricsAsJSON()),
    );
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await promClientOf([]).metrics());
  });

  it('keeps counting a series after a reset, through the children it bound before', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry, NAMES, HELP, BUCKETS);
    for (const observation of observations) metrics.observe(...observation);
    registry.resetMetrics();
    for (const observation of observations.slice(0, 3)) metrics.observe(...observation);
    expect(await registry.metrics()).toBe(await promClientOf(observations.slice(0, 3)).metrics());
  });

  it('adds each request to the counter once, however often and whenever it is scraped', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry, NAMES, HELP, BUCKETS);
    for (const observation of observations.slice(0, 4)) metrics.observe(...observation);
    await registry.metrics();
    await registry.getMetricsAsJSON();
    for (const observation of observations.slice(4)) metrics.observe(...observation);
    expect(await registry.metrics()).toBe(await promClientOf(observations).metrics());
    expect(await registry.metrics()).toBe(await promClientOf(observations).metrics());
  });

  it('counts a value on a bound in that bucket, as Prometheus’ `le` says', async () => {
    const text = await requestMetricsOf([['GET', '/a', '200', 0.01]]).metrics();
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/a",status="200"} 0',
    );
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="0.01",method="GET",route="/a",status="200"} 1',
    );
  });
});
