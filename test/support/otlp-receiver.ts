import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP attribute value, as the JSON encoding writes it. */
interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}

/** A span as received, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
  scope: string;
  resource: Record<string, string | number | boolean | undefined>;
}

interface ExportTraceServiceRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: { key: string; value: AnyValue }[];
      }[];
    }[];
  }[];
}

const plain = (value: AnyValue): string | number | boolean | undefined =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value.boolValue ??
  value.doubleValue;

const flatten = (
  attributes: { key: string; value: AnyValue }[] = [],
): Record<string, string | number | boolean | undefined> =>
  Object.fromEntries(attributes.map((a) => [a.key, plain(a.value)]));

/**
 * A minimal OTLP/HTTP trace receiver (what a collector is to the service), in the test process:
 * takes `POST /v1/traces` in the JSON encoding (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) and
 * keeps every span. Anything else is answered 404 and remembered, so a test can see it.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly unexpected: string[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (
          req.method !== 'POST' ||
          req.url !== '/v1/traces' ||
          !/json/.test(req.headers['content-type'] ?? '')
        ) {
          receiver.unexpected.push(
            `${req.method ?? '?'} ${req.url ?? '?'} ${req.headers['content-type'] ?? ''}`,
          );
          res.writeHead(404).end();
          return;
        }
        receiver.accept(
          JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportTraceServiceRequest,
        );
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to: the exporter appends `/v1/traces`. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(body: ExportTraceServiceRequest): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const resource = flatten(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            kind: span.kind,
            attributes: flatten(span.attributes),
            scope: scopeSpans.scope?.name ?? '',
            resource,
          });
        }
      }
    }
  }
}
