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

/** The documents the app serves, one per API version, and the prefix their paths are under. */
const DOCUMENTS = [
  { apiRoot: '/v1', url: '/openapi/v1.json' },
  { apiRoot: '/v2', url: '/openapi/v2.json' },
] as const;

/** One version's document, ready to match and validate. */
interface VersionContract {
  apiRoot: string;
  document: Document;
  backend: OpenAPIBackend;
}

/**
 * Holds responses to the OpenAPI documents the app serves (one per version: /openapi/v1.json,
 * which is also /openapi.json, and /openapi/v2.json), with openapi-backend (ajv underneath): for
 * a request that is an operation of its version's document, the status must be one it documents,
 * the body must match that response's schema (or be empty where it has none), and every header it
 * documents must be present and valid. Requests that are no operation (an unknown path, another
 * method) are not part of a document; errors.e2e-spec holds their shape.
 */
export class OpenApiContract {
  private constructor(private readonly versions: VersionContract[]) {}

  /** v1's document (the one at /openapi.json). */
  get document(): Document {
    return this.versions[0].document;
  }

  /**
   * The documents as the app serves them. Each operation's validators are compiled when a
   * response of it is first checked. With `validateDocuments`, each document is first validated
   * against the OpenAPI schema (throwing if one is not a valid OpenAPI document): the documents'
   * own suite does that once; every app of every suite serves the same ones.
   */
  static async load(
    http: Server,
    { validateDocuments = false }: { validateDocuments?: boolean } = {},
  ): Promise<OpenApiContract> {
    const versions: VersionContract[] = [];
    for (const { apiRoot, url } of DOCUMENTS) {
      const res = await request(http).get(url).expect(200);
      const document = res.body as Document;
      // Paths are relative to the servers, which end in the version prefix.
      const backend = new OpenAPIBackend({
        definition: document,
        apiRoot,
        strict: true,
        quick: !validateDocuments,
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
      versions.push({ apiRoot, document, backend });
    }
    return new OpenApiContract(versions);
  }

  /** Throws, naming what differs, when the response breaks the document. */
  check(method: string, path: string, res: ReceivedResponse): void {
    const version = this.versions.find(({ apiRoot }) => path.startsWith(`${apiRoot}/`));
    const operation = version && this.operationOf(version.backend, method, path);
    if (!version || !operation) return;
    const { backend } = version;
    const where = `${method.toUpperCase()} ${path} → ${res.status} (${operation.operationId ?? '?'})`;
    const documented = operation.responses?.[String(res.status)];
    if (!documented || '$ref' in documented) {
      throw new Error(`${where}: status ${res.status} is not documented for this operation`);
    }

    // Present headers against their schemas; then the required ones must be there. (openapi-
    // backend's Superset match would require every documented header, `required: false` too.)
    const headers = backend.validateResponseHeaders(res.headers, operation, {
      statusCode: res.status,
      setMatchType: SetMatchType.Any,
    });
    if (!headers.valid) throw new Error(`${where}: headers ${JSON.stringify(headers.errors)}`);
    const missing = Object.entries(documented.headers ?? {})
      .filter(([, header]) => 'required' in header && header.required === true)
      .map(([name]) => name.toLowerCase())
      .filter((name) => !(name in res.headers));
    if (missing.length > 0) throw new Error(`${where}: headers missing: ${missing.join(', ')}`);

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
    const body = backend.validateResponse(res.body, operation, res.status);
    if (!body.valid) throw new Error(`${where}: body ${JSON.stringify(body.errors)}`);
  }

  private operationOf(
    backend: OpenAPIBackend,
    method: string,
    path: string,
  ): Operation | undefined {
    // Express answers HEAD with the GET route, headers and status alike.
    const lookup = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    try {
      return backend.matchOperation({ method: lookup, path: path.split('?')[0], headers: {} });
    } catch {
      return undefined; // e.g. a path whose percent-encoding is broken: no operation
    }
  }
}
