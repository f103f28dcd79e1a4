import { request } from 'node:http';
import { createGunzip } from 'node:zlib';
import { settledRssBytes, watchPeakRss } from './process-memory';

export interface LargeListResult {
  /** Content-Encoding of the answer: `identity` or `gzip`. */
  encoding: string;
  firstByteMs: number;
  totalMs: number;
  /** Bytes over the wire (compressed, if it was). */
  bytes: number;
  /** Bytes of JSON once decoded. */
  decodedBytes: number;
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
 * memory is watched, from the moment it has settled (what a fresh start still loads in the
 * background is not the list's). The body is checked without parsing it: an Order object has no nested object
 * and no `}` inside a string, so each `}` closes one order. With `gzip`, the client accepts
 * gzip, the answer must be gzipped, and it is decoded as it arrives.
 */
export async function fetchLargeList(
  url: string,
  headers: Record<string, string>,
  serverPid: number,
  expectedOrders: number,
  timeoutMs: number,
  gzip = false,
): Promise<LargeListResult> {
  const rssBefore = await settledRssBytes(serverPid);
  const rss = watchPeakRss(serverPid);
  return new Promise<LargeListResult>((resolve, reject) => {
    const started = process.hrtime.bigint();
    const elapsedMs = (): number => Number(process.hrtime.bigint() - started) / 1e6;
    let firstByteMs: number | undefined;
    let bytes = 0;
    let decodedBytes = 0;
    let orders = 0;
    let last = 0;
    let first = 0;
    const requestHeaders = gzip ? { ...headers, 'Accept-Encoding': 'gzip' } : headers;
    const req = request(
      `${url}/v1/store/orders`,
      { headers: requestHeaders, agent: false },
      (res) => {
        const encoding = res.headers['content-encoding'] ?? 'identity';
        if (res.statusCode !== 200 || encoding !== (gzip ? 'gzip' : 'identity')) {
          req.destroy(new Error(`the list answered ${String(res.statusCode)}, ${encoding}`));
          return;
        }
        res.on('data', (chunk: Buffer) => {
          firstByteMs ??= elapsedMs();
          bytes += chunk.length;
        });
        const body = gzip ? res.pipe(createGunzip()) : res;
        body.on('data', (chunk: Buffer) => {
          if (decodedBytes === 0) first = chunk[0];
          decodedBytes += chunk.length;
          for (const byte of chunk) if (byte === CLOSE_BRACE) orders++;
          last = chunk[chunk.length - 1];
        });
        body.on('end', () => {
          clearTimeout(timer);
          const totalMs = elapsedMs();
          const peak = rss.stop();
          resolve({
            encoding,
            firstByteMs: firstByteMs ?? totalMs,
            totalMs,
            bytes,
            decodedBytes,
            orders,
            whole:
              res.complete && first === 0x5b && last === CLOSE_BRACKET && orders === expectedOrders,
            rssBeforeBytes: rssBefore,
            peakRssGrowthBytes: Math.max(0, peak - rssBefore),
          });
        });
        res.on('error', fail);
        body.on('error', fail);
      },
    );
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
