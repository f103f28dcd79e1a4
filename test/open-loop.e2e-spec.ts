import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { openLoop, openLoopDuring, percentile, type Target } from './support/open-loop';

/**
 * The open-loop generator of the overload bench and the stack test: requests leave on their
 * schedule (request i at i / rate seconds), so that an answer's time, counted from its schedule,
 * is the server's and not the generator's own lateness.
 */
describe('the open-loop load generator', () => {
  const RATE = 10;
  const INTERVAL_MS = 1000 / RATE;
  let server: Server;
  let url: string;
  /** When each request (its path: its index) reached the server, on this process's clock. */
  let arrivals: Map<number, number>;

  beforeAll(async () => {
    server = createServer((req, res) => {
      arrivals.set(Number(req.url?.slice(1)), performance.now());
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  beforeEach(() => {
    arrivals = new Map();
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const target = (): Target => ({
    url,
    headers: {},
    next: (i) => ({ method: 'GET', path: `/${i}` }),
  });

  it('sends each request on its schedule, the first at once', async () => {
    const start = performance.now();
    const run = await openLoop(target(), RATE, 2_000);

    expect(run.sent).toBe(20);
    expect(run.answers.map((a) => a.status)).toEqual(new Array(20).fill(200));
    // Late by the time to reach a server on loopback, never by a whole interval (sent one
    // interval late and timed from the schedule, every answer would count it as the server's).
    const lateness = [...arrivals].map(([i, at]) => at - start - i * INTERVAL_MS);
    expect(percentile(lateness, 50)).toBeLessThan(INTERVAL_MS / 2);
  });

  it('sends for as long as `during` runs, then awaits every answer', async () => {
    const run = await openLoopDuring(target(), RATE, () => sleep(1_000));

    // A timer may fire a fraction of a millisecond before its time on this clock.
    expect(run.durationMs).toBeGreaterThan(990);
    // Those due by then: request i at i / rate seconds.
    const due = Math.floor((run.durationMs * RATE) / 1000);
    expect(run.sent).toBeGreaterThanOrEqual(due);
    expect(run.sent).toBeLessThanOrEqual(due + 1);
    expect(run.answers).toHaveLength(run.sent);
    expect(run.answers.every((a) => a.status === 200)).toBe(true);
    expect(arrivals.size).toBe(run.sent);
  });
});
