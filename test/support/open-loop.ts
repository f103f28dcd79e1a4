import { Agent, request } from 'node:http';

/**
 * The load generators of the overload bench and of the stack test's overload. Open loop: requests
 * are sent on a fixed schedule, whatever the answers, as many independent clients would
 * (autocannon and wrk are closed loops: a connection sends its next request only once answered,
 * so a slow server slows the load down and hides its queue). Each request's time runs from its scheduled send, not from when a free
 * connection took it: a late send is the server's delay too ("coordinated omission").
 */

/** One request to send: the scenario decides each one (a new order to cancel, a mixed route). */
export interface Shot {
  method: 'GET' | 'DELETE';
  path: string;
}

/**
 * One answer: when it was scheduled (ms from the run's start), its status (or the connection's
 * error code), its time; an error answer (4xx, 5xx) also with its `Retry-After` and its body,
 * to tell who answered it and how.
 */
export interface Answer {
  at: number;
  status: number | string;
  ms: number;
  error?: ErrorAnswer;
}

export interface ErrorAnswer {
  retryAfter?: string;
  body: string;
}

export interface LoadRun {
  durationMs: number;
  sent: number;
  answers: Answer[];
}

export interface Target {
  url: string;
  headers: Record<string, string>;
  next: (i: number) => Shot;
}

/** Far more connections than the server's limit: the client's pool never holds requests back. */
const OPEN_LOOP_CONNECTIONS = 1_000;
/** Past the schedule's end, answers still due are awaited this long, then counted as lost. */
const DRAIN_MS = 30_000;

/** An error answer's body is read (it is small); any other is passed over unread. */
const ERROR_STATUS = 400;

function send(
  agent: Agent,
  target: Target,
  shot: Shot,
  onAnswer: (status: number | string, error?: ErrorAnswer) => void,
): void {
  const req = request(
    `${target.url}${shot.path}`,
    { method: shot.method, headers: target.headers, agent },
    (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      res.on('end', () => {
        if (status < ERROR_STATUS) onAnswer(status);
        else {
          const retryAfter = res.headers['retry-after'];
          onAnswer(status, { retryAfter, body: Buffer.concat(chunks).toString('utf8') });
        }
      });
      res.on('error', (error: NodeJS.ErrnoException) => onAnswer(error.code ?? 'error'));
      if (status < ERROR_STATUS) res.resume();
      else res.on('data', (chunk: Buffer) => chunks.push(chunk));
    },
  );
  req.on('error', (error: NodeJS.ErrnoException) => onAnswer(error.code ?? 'error'));
  req.end();
}

/**
 * Sends `rate` requests a second for `durationMs`, on schedule, over up to
 * {@link OPEN_LOOP_CONNECTIONS} kept-alive connections; resolves once every request is answered
 * (or after {@link DRAIN_MS} more, the rest counted as status `lost`).
 */
export function openLoop(target: Target, rate: number, durationMs: number): Promise<LoadRun> {
  return run(target, rate, Promise.resolve(durationMs));
}

/**
 * As {@link openLoop}, for as long as `during` runs: requests are sent on schedule until it
 * settles, then awaited as there.
 */
export async function openLoopDuring(
  target: Target,
  rate: number,
  during: () => Promise<unknown>,
): Promise<LoadRun> {
  let stop: (durationMs: number) => void = () => undefined;
  // Before the schedule's own start: no request is due past the duration measured from here.
  const start = performance.now();
  const ran = run(target, rate, new Promise<number>((resolve) => (stop = resolve)));
  try {
    await during();
  } finally {
    stop(performance.now() - start);
  }
  return ran;
}

/** Requests on schedule from now until `duration` (ms from now, once known) is over. */
function run(target: Target, rate: number, duration: Promise<number>): Promise<LoadRun> {
  const agent = new Agent({ keepAlive: true, maxSockets: OPEN_LOOP_CONNECTIONS });
  const answers: Answer[] = [];
  const start = performance.now();
  let durationMs = Number.POSITIVE_INFINITY;
  let total = Number.POSITIVE_INFINITY;
  let sent = 0;
  return new Promise((resolve) => {
    let drainTimer: NodeJS.Timeout | undefined;
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(drainTimer);
      agent.destroy();
      const lost = sent - answers.length;
      for (let i = 0; i < lost; i++) answers.push({ at: durationMs, status: 'lost', ms: DRAIN_MS });
      resolve({ durationMs, sent, answers });
    };
    const tick = (): void => {
      const now = performance.now() - start;
      // Request i is due at i / rate seconds: the first at once.
      const due = Math.min(total, Math.floor((now * rate) / 1000) + 1);
      for (; sent < due; sent++) {
        const at = (sent * 1000) / rate;
        send(agent, target, target.next(sent), (status, error) => {
          answers.push({ at, status, ms: performance.now() - start - at, error });
          if (sent === total && answers.length === total) finish();
        });
      }
      if (sent < total) setTimeout(tick, 1);
      else if (answers.length === total) finish();
      else drainTimer = setTimeout(finish, DRAIN_MS);
    };
    void duration.then((ms) => {
      durationMs = ms;
      total = Math.max(sent, Math.floor((rate * ms) / 1000));
    });
    tick();
  });
}

/**
 * Closed loop: `connections` clients, each sending its next request once answered, for
 * `durationMs`: the rate the server sustains when it sets the pace itself.
 */
export async function closedLoop(
  target: Target,
  connections: number,
  durationMs: number,
): Promise<LoadRun> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const answers: Answer[] = [];
  const start = performance.now();
  let sent = 0;
  const client = async (): Promise<void> => {
    while (performance.now() - start < durationMs) {
      const at = performance.now() - start;
      const answer = await new Promise<Pick<Answer, 'status' | 'error'>>((resolve) =>
        send(agent, target, target.next(sent++), (status, error) => resolve({ status, error })),
      );
      answers.push({ at, ...answer, ms: performance.now() - start - at });
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  agent.destroy();
  return { durationMs: performance.now() - start, sent, answers };
}

/** The `p`-th percentile (0 to 100) of some times, in ms; 0 when there are none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Answered 2xx. */
export const served = (a: Answer): boolean => typeof a.status === 'number' && a.status < 300;

/** Successful answers a second over a run's schedule. */
export const goodputOf = (run: LoadRun): number =>
  run.answers.filter(served).length / (run.durationMs / 1000);

/** The 99th percentile of some answers' times, in ms. */
export const p99Of = (answers: Answer[]): number =>
  percentile(
    answers.map((a) => a.ms),
    99,
  );
