import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got. */
export interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A message's body, as the service sends it. */
export interface Message {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** The message verified as a receiver does it: throws unless a signature matches `secret`. */
export function verified(secret: string, r: Received): Message {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  }) as Message;
}

/** What the receiver answers a request (after reading its body): `hang` never answers. */
export type Answer =
  { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | 'hang';

/**
 * A webhook receiver on loopback: records every request and answers as `answer` says (200 by
 * default), as a warehouse or mailer would. Nothing here leaves the machine.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  /** Requests being answered now, and the most there were at once. */
  inFlight = 0;
  mostInFlight = 0;
  answer: (request: Received, index: number) => Answer = () => ({ status: 200 });
  private readonly hanging = new Set<ServerResponse>();
  private server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = {
          at: Date.now(),
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.received.push(request);
        const answer = this.answer(request, this.received.length - 1);
        if (answer === 'hang') {
          this.hanging.add(res);
          return;
        }
        this.inFlight++;
        this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
        setTimeout(() => {
          this.inFlight--;
          res.writeHead(answer.status, answer.headers ?? {});
          res.end(answer.body ?? '');
        }, answer.delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}/hook`;
    return this;
  }

  /** Requests carrying this `webhook-id`. */
  of(webhookId: string): Received[] {
    return this.received.filter((r) => r.headers['webhook-id'] === webhookId);
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
