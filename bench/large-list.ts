import { request } from 'node:http';
import { rssBytes, watchPeakRss } from './process-memory';

export interface LargeListResult {
  firstByteMs: number;
  totalMs: number;
  bytes: number;
  orders: number;
  /** The body was one whole JSON array: `[`, `expectedOrders` objects, `]`. */
  whole: boolean;
  rssBeforeBytes: number;
  peakRssGrowthBytes: number;
}

const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * One GET of the whole list, read as fast as the client can, while the server process's resident
 * memory is watched. The body is checked without parsing it: an Order object has no nested object
 * and no `}` inside a string, so each `}` closes one order.
 */
export function fetchLargeList(
  url: string,
  headers: Record<string, string>,
  serverPid: number,
  expectedOrders: number,
  timeoutMs: number,
): Promise<LargeListResult> {
  const rssBefore = rssBytes(serverPid);
  const rss = watchPeakRss(serverPid);
  return new Promise<LargeListResult>((resolve, reject) => {
    const started = process.hrtime.bigint();
    const elapsedMs = (): number => Number(process.hrtime.bigint() - started) / 1e6;
    let firstByteMs: number | undefined;
    let bytes = 0;
    let orders = 0;
    let last = 0;
    let first = 0;
    const req = request(`${url}/v1/store/orders`, { headers, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        req.destroy(new Error(`the list answered ${String(res.statusCode)}`));
        return;
      }
      res.on('data', (chunk: Buffer) => {
        if (firstByteMs === undefined) {
          firstByteMs = elapsedMs();
          first = chunk[0];
        }
        bytes += chunk.length;
        for (const byte of chunk) if (byte === CLOSE_BRACE) orders++;
        last = chunk[chunk.length - 1];
      });
      res.on('end', () => {
        clearTimeout(timer);
        const totalMs = elapsedMs();
        const peak = rss.stop();
        resolve({
          firstByteMs: firstByteMs ?? totalMs,
          totalMs,
          bytes,
          orders,
          whole:
            res.complete && first === 0x5b && last === CLOSE_BRACKET && orders === expectedOrders,
          rssBeforeBytes: rssBefore,
          peakRssGrowthBytes: Math.max(0, peak - rssBefore),
        });
      });
      res.on('error', fail);
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`the list did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    function fail(error: Error): void {
      clearTimeout(timer);
      rss.stop();
      reject(error);
    }
    req.on('error', fail);
    req.end();
  });
}
