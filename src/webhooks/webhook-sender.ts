import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  checkedAddresses,
  hostOf,
  type ResolvedAddress,
  type WebhookResolver,
} from './webhook-addresses';

/** At most this much of an answer is kept (as the delivery's `lastError`). */
export const KEPT_ANSWER_BYTES = 1024;

export interface Attempt {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What one attempt came to: a status (any), or an error before one. */
export type AttemptResult =
  | { ok: boolean; status: number; answer: string }
  | { ok: false; status?: undefined; error: string };

export interface SenderOptions {
  resolver: WebhookResolver;
  timeoutMs: number;
  allowPrivate: boolean;
}

/** A `lookup` for the socket that hands it the addresses already resolved and checked. */
function lookupOf(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all === true) {
      (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, addresses);
    } else {
      callback(null, addresses[0].address, addresses[0].family);
    }
  };
}

/** The first bytes of an answer (at most {@link KEPT_ANSWER_BYTES}), as text. */
function keptAnswer(res: IncomingMessage, deadline: Promise<void>): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      res.removeAllListeners('data');
      res.destroy();
      resolve(Buffer.concat(chunks).subarray(0, KEPT_ANSWER_BYTES).toString('utf8'));
    };
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= KEPT_ANSWER_BYTES) done();
    });
    res.on('end', done);
    res.on('error', done);
    void deadline.then(done);
  });
}

/**
 * One attempt: the host resolved and every address checked, then a POST to the checked address
 * (never re-resolved by the socket), no redirect followed, an answer's status awaited for at most
 * `timeoutMs`, and at most 1 KiB of its body kept.
 */
export async function sendAttempt(
  attempt: Attempt,
  options: SenderOptions,
): Promise<AttemptResult> {
  const url = new URL(attempt.url);
  let addresses: ResolvedAddress[];
  try {
    addresses = await checkedAddresses(options.resolver, hostOf(url), options.allowPrivate);
  } catch (error) {
    return { ok: false, error: `refused: ${(error as Error).message}` };
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return await new Promise<AttemptResult>((resolve) => {
    let settled = false;
    let answered = false;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((expire) => {
      timer = setTimeout(expire, options.timeoutMs);
    });
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = send(url, {
      method: 'POST',
      headers: { ...attempt.headers, 'content-length': String(Buffer.byteLength(attempt.body)) },
      lookup: lookupOf(addresses),
      agent: false,
    });
    void deadline.then(() => {
      // A status in time decides the attempt; its body is only read until then.
      if (answered) return;
      req.destroy();
      finish({ ok: false, error: `no answer within ${options.timeoutMs} ms` });
    });
    req.on('error', (error) => finish({ ok: false, error: error.message }));
    req.on('response', (res) => {
      answered = true;
      const status = res.statusCode ?? 0;
      void keptAnswer(res, deadline).then((answer) => {
        const redirect = status >= 300 && status < 400;
        finish({
          ok: status >= 200 && status < 300,
          status,
          answer: redirect
            ? `redirect not followed${res.headers.location ? ` (to ${res.headers.location})` : ''}`
            : answer,
        });
      });
    });
    req.end(attempt.body);
  });
}
