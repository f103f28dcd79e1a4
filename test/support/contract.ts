import addFormats from 'ajv-formats';
import type { Server } from 'node:http';
import OpenAPIBackend, { type Document, type Operation, SetMatchType } from 'openapi-backend';
import request from 'supertest';

/** What the contract checks of a response: as supertest hands it over. */
export interface ReceivedResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  text?: string;
}

/**
 * Holds responses to the OpenAPI document the app serves at /openapi.json, with openapi-backend
 * (ajv underneath): for a request that is an operation of the document, the status must be one it
 * documents, the body must match that response's schema (or be empty where it has none), and
 * every header it documents must be present and valid. Requests that are no operation (an
 * unknown path, another method) are not part of the document; errors.e2e-spec holds their shape.
 */
export class OpenApiContract {
  private constructor(
    readonly document: Document,
    private readonly backend: OpenAPIBackend,
  ) {}

  /** The document as the app serves it. Throws if it is not a valid OpenAPI document. */
  static async load(http: Server): Promise<OpenApiContract> {
    const res = await request(http).get('/openapi.json').expect(200);
    const document = res.body as Document;
    // Paths are relative to the servers, which end in /v1.
    const backend = new OpenAPIBackend({
      definition: document,
      apiRoot: '/v1',
      strict: true,
      customizeAjv: (ajv) => {
        addFormats(ajv, ['date-time']);
        // The body reaches ajv through JSON.parse, which rounds 9223372036854775807 to 2^63:
        // accept that double too. Exactness is checked on the response text (orders.e2e-spec).
        ajv.addFormat('int64', {
          type: 'number',
          validate: (n: number) => Number.isInteger(n) && Math.abs(n) <= 2 ** 63,
        });
        return ajv;
      },
    });
    await backend.init();
    return new OpenApiContract(document, backend);
  }

  /** Throws, naming what differs, when the response breaks the document. */
  check(method: string, path: string, res: ReceivedResponse): void {
    const operation = this.operationOf(method, path);
    if (!operation) return;
    const where = `${method.toUpperCase()} ${path} → ${res.status} (${operation.operationId ?? '?'})`;
    const documented = operation.responses?.[String(res.status)];
    if (!documented || '$ref' in documented) {
      throw new Error(`${where}: status ${res.status} is not documented for this operation`);
    }

    const headers = this.backend.validateResponseHeaders(res.headers, operation, {
      statusCode: res.status,
      setMatchType: SetMatchType.Superset,
    });
    if (!headers.valid) throw new Error(`${where}: headers ${JSON.stringify(headers.errors)}`);

    if (method.toLowerCase() === 'head') return;
    const mediaTypes = Object.keys(documented.content ?? {});
    if (mediaTypes.length === 0) {
      if (res.text) throw new Error(`${where}: a body where the document has none`);
      return;
    }
    const contentType = res.headers['content-type'] ?? '';
    if (!mediaTypes.some((type) => contentType.startsWith(type))) {
      throw new Error(`${where}: Content-Type ${contentType}, documented ${mediaTypes.join(', ')}`);
    }
    const body = this.backend.validateResponse(res.body, operation, res.status);
    if (!body.valid) throw new Error(`${where}: body ${JSON.stringify(body.errors)}`);
  }

  private operationOf(method: string, path: string): Operation | undefined {
    // Express answers HEAD with the GET route, headers and status alike.
    const lookup = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    try {
      return this.backend.matchOperation({ method: lookup, path: path.split('?')[0], headers: {} });
    } catch {
      return undefined; // e.g. a path whose percent-encoding is broken: no operation
    }
  }
}
