import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
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
  | { ok: boolean; status: number; answer: string; retryAfterSeconds?: number }
  | { ok: false; status?: undefined; error: string };

export interface SenderOptions {
  resolver: WebhookResolver;
  timeoutMs: number;
  allowPrivate: boolean;
  allowHttp: boolean;
}

/**
 * A `lookup` for the socket that hands it the addresses already resolved and checked. It answers
 * on a later turn of the event loop, as a real lookup does: a socket whose connect fails at once
 * (no route to the address) emits its error only after the request listens for it.
 */
function lookupOf(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    setImmediate(() => {
      if ((options as { all?: boolean }).all === true) {
        (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, addresses);
      } else {
        callback(null, addresses[0].address, addresses[0].family);
      }
    });
  };
}

/** A `Retry-After` in seconds (a number or an HTTP date), or undefined when there is none. */
export function retryAfterSeconds(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Agents kept, at most: one per endpoint address in use is the usual need. */
const MOST_AGENTS = 256;

/**
 * Keep-alive agents, one per origin and set of checked addresses: a connection an agent keeps
 * was made (by the attempts' own `lookup`) to one of those addresses, so reusing it sends nothing
 * anywhere the check did not allow, and an attempt to a receiver that keeps its connections open
 * needs no new one.
 */
const agents = new Map<string, HttpAgent>();

function agentFor(url: URL, addresses: readonly ResolvedAddress[]): HttpAgent {
  const key = `${url.protocol}//${url.host} ${addresses.map((a) => a.address).join(' ')}`;
  let agent = agents.get(key);
  if (agent === undefined) {
    if (agents.size >= MOST_AGENTS) {
      const [oldest, oldAgent] = agents.entries().next().value as [string, HttpAgent];
      agents.delete(oldest);
      oldAgent.destroy();
    }
    agent =
      url.protocol === 'https:'
        ? new HttpsAgent({ keepAlive: true })
        : new HttpAgent({ keepAlive: true });
    agents.set(key, agent);
  }
  return agent;
}

/**
 * The first bytes of an answer (at most {@link KEPT_ANSWER_BYTES}), as text. An answer read to
 * its end leaves its connection to the agent, for the next attempt; a longer one, or one still
 * coming at the deadline, closes it.
 */
function keptAnswer(res: IncomingMessage, deadline: Promise<void>): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const done = (close: boolean) => {
      if (settled) return;
      settled = true;
      if (close) {
        res.removeAllListeners('data');
        res.destroy();
      }
      resolve(Buffer.concat(chunks).subarray(0, KEPT_ANSWER_BYTES).toString('utf8'));
    };
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= KEPT_ANSWER_BYTES) done(true);
    });
    res.on('end', () => done(false));
    res.on('error', () => done(true));
    void deadline.then(() => done(true));
  });
}

/**
 * One attempt: the host resolved and every address checked, then a POST to the checked address
 * (never re-resolved by the socket), no redirect followed, an answer's status awaited, and at most
 * 1 KiB of its body kept. `timeoutMs` bounds all of it, the lookup included. Every failure, of the
 * lookup, the connection, TLS or the answer, is the attempt's result: none reaches the caller as
 * an error.
 */
export async function sendAttempt(
  attempt: Attempt,
  options: SenderOptions,
): Promise<AttemptResult> {
  const timedOut: AttemptResult = { ok: false, error: `no answer within ${options.timeoutMs} ms` };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((expire) => {
    timer = setTimeout(expire, options.timeoutMs);
  });
  const progress = { expired: false, answered: false };
  const posted = post(attempt, options, deadline, progress);
  try {
    return await Promise.race([
      posted,
      // Until a status comes; after it, the answer's body is read until the deadline.
      deadline.then(() => {
        progress.expired = true;
        return progress.answered ? posted : timedOut;
      }),
    ]);
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

async function post(
  attempt: Attempt,
  options: SenderOptions,
  deadline: Promise<void>,
  progress: { expired: boolean; answered: boolean },
): Promise<AttemptResult> {
  const url = new URL(attempt.url);
  if (url.protocol !== 'https:' && !(options.allowHttp && url.protocol === 'http:')) {
    return { ok: false, error: `refused: ${url.protocol}// endpoints are not allowed` };
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await checkedAddresses(
      options.resolver,
      hostOf(url),
      options.allowPrivate,
      options.timeoutMs,
    );
  } catch (error) {
    return { ok: false, error: `refused: ${(error as Error).message}` };
  }
  if (progress.expired) return { ok: false, error: `no answer within ${options.timeoutMs} ms` };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return await new Promise<AttemptResult>((resolve) => {
    const req = send(url, {
      method: 'POST',
      headers: { ...attempt.headers, 'content-length': String(Buffer.byteLength(attempt.body)) },
      lookup: lookupOf(addresses),
      agent: agentFor(url, addresses),
    });
    void deadline.then(() => {
      // A status in time decides the attempt; its body is only read until then.
      if (!progress.answered) req.destroy();
    });
    req.on('error', (error) => resolve({ ok: false, error: error.message }));
    req.on('response', (res) => {
      progress.answered = true;
      const status = res.statusCode ?? 0;
      void keptAnswer(res, deadline).then((answer) => {
        const redirect = status >= 300 && status < 400;
        const retryAfter = header(res, 'retry-after');
        resolve({
          ok: status >= 200 && status < 300,
          status,
          answer: redirect
            ? `redirect not followed${res.headers.location ? ` (to ${res.headers.location})` : ''}`
            : answer,
          ...(status === 429 && retryAfter !== undefined
            ? { retryAfterSeconds: retryAfterSeconds(retryAfter) }
            : {}),
        });
      });
    });
    req.end(attempt.body);
  });
}

function header(res: IncomingMessage, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
