import type { Ajv, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Server } from 'node:http';
import OpenAPIBackend, { type Document, type Operation, ValidationContext } from 'openapi-backend';
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

/** What an operation documents for one status (the document is dereferenced: no `$ref` left). */
type ResponseObject = Exclude<NonNullable<Operation['responses']>[string], { $ref: string }>;

/** One version's document, ready to match and validate. */
interface VersionContract {
  apiRoot: string;
  document: Document;
  backend: OpenAPIBackend;
  /** Compiles the schemas of bodies. */
  bodies: Ajv;
  /** Compiles the schemas of headers, whose values are strings to coerce as HTTP sends them. */
  headers: Ajv;
  /** Each operation's validators by status, compiled when a response of it is first checked. */
  validators: Map<string, { headers: ValidateFunction; body?: ValidateFunction }>;
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
      versions.push({
        apiRoot,
        document,
        backend,
        bodies: backend.validator.getAjv(ValidationContext.Response),
        headers: backend.validator.getAjv(ValidationContext.ResponseHeaders, { coerceTypes: true }),
        validators: new Map(),
      });
    }
    return new OpenApiContract(versions);
  }

  /** Throws, naming what differs, when the response breaks the document. */
  check(method: string, path: string, res: ReceivedResponse): void {
    const version = this.versions.find(({ apiRoot }) => path.startsWith(`${apiRoot}/`));
    const operation = version && this.operationOf(version.backend, method, path);
    if (!version || !operation) return;
    const where = `${method.toUpperCase()} ${path} → ${res.status} (${operation.operationId ?? '?'})`;
    const documented = operation.responses?.[String(res.status)];
    if (!documented || '$ref' in documented) {
      throw new Error(`${where}: status ${res.status} is not documented for this operation`);
    }

    const validators = this.validatorsOf(version, operation, res.status, documented);
    // Present headers against their schemas; then the required ones must be there.
    const headers = Object.fromEntries(
      Object.entries(res.headers).map(([name, value]) => [name.toLowerCase(), value]),
    );
    if (!validators.headers({ headers })) {
      throw new Error(`${where}: headers ${JSON.stringify(validators.headers.errors)}`);
    }
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
    if (validators.body && !validators.body(res.body)) {
      throw new Error(`${where}: body ${JSON.stringify(validators.body.errors)}`);
    }
  }

  /**
   * The validators of one status of an operation, as openapi-backend builds them (its Ajv
   * options, formats and dereferenced schemas), but only for that status: openapi-backend compiles
   * every status of an operation at once, each header schema four times (one per match type),
   * which made compiling most of the contract's CPU in a suite.
   */
  private validatorsOf(
    version: VersionContract,
    operation: Operation,
    status: number,
    documented: ResponseObject,
  ): { headers: ValidateFunction; body?: ValidateFunction } {
    const key = `${operation.operationId ?? `${operation.method} ${operation.path}`} ${status}`;
    const known = version.validators.get(key);
    if (known) return known;
    const properties = Object.fromEntries(
      Object.entries(documented.headers ?? {}).flatMap(([name, header]) =>
        'schema' in header && header.schema ? [[name.toLowerCase(), header.schema]] : [],
      ),
    );
    // Present headers only ("any" in openapi-backend's terms): `check` asks for the required ones.
    const headers = version.headers.compile({
      type: 'object',
      properties: {
        headers: { type: 'object', additionalProperties: true, properties, required: [] },
      },
    });
    const schema = documented.content?.['application/json']?.schema;
    const validators = { headers, body: schema ? version.bodies.compile(schema) : undefined };
    version.validators.set(key, validators);
    return validators;
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
