/**
 * The service's performance changes, each with how to undo it in the built service (dist/): what
 * `npm run bench:costs` (timing) and `npm run bench:instructions -- --costs` (instruction counts)
 * compare the whole service against. Building a copy fails if a change can no longer be found in
 * the build (the code moved: update the patch here).
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository, whose dist/ and node_modules the copies use. */
export const ROOT = join(__dirname, '..');

/** One change, undone: in which compiled file, what it is and what it was. */
export interface Undo {
  file: string;
  now: string;
  before: string;
}

export interface Change {
  name: string;
  /** Measured with the limits in Redis (against the whole service with them there too). */
  redis?: boolean;
  undo: Undo[];
}

const API_HELMET_OPTIONS =
  `{ contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], ` +
  `frameAncestors: ["'none'"] } }, xFrameOptions: { action: 'deny' }, ` +
  `crossOriginOpenerPolicy: false, crossOriginResourcePolicy: false, originAgentCluster: false, ` +
  `referrerPolicy: false, xDnsPrefetchControl: false, xDownloadOptions: false, ` +
  `xPermittedCrossDomainPolicies: false, xXssProtection: false }`;

export const CHANGES: Change[] = [
  {
    name: 'log line: one synchronous write(2) per request (pino default)',
    undo: [
      {
        file: 'logging/logging.module.js',
        now: '(0, batched_destination_1.batchedDestination)()',
        before: 'pino_1.default.destination({ dest: 1, sync: true })',
      },
    ],
  },
  {
    name: "log line: sonic-boom's own buffer (`sync: false, minLength: 4096`) instead of batches",
    undo: [
      {
        file: 'logging/logging.module.js',
        now: '(0, batched_destination_1.batchedDestination)()',
        // As it was: sonic-boom's buffer, and a timer flushing it every 200 ms.
        before:
          '(() => { const d = pino_1.default.destination({ dest: 1, sync: false, minLength: 4096 }); ' +
          'setInterval(() => d.flush(), 200).unref(); return d; })()',
      },
    ],
  },
  {
    name: "log line: pino's serialisation of the request's object (not the service's template)",
    undo: [
      {
        file: 'logging/logging.module.js',
        now: '(0, request_log_1.requestLogWriter)(logger, ownLines ? destination : undefined)',
        before: '(0, request_log_1.requestLogWriter)(logger)',
      },
    ],
  },
  {
    name: "response headers: Node's setHeader for the service's own (no setter per name)",
    undo: [
      {
        file: 'platform/response-header.js',
        now: 'store(res, OUT_HEADERS, key, name, value);',
        before: 'res.setHeader(name, value);',
      },
    ],
  },
  {
    name: "JSON Content-Type through Express's `res.type()` (Node's setHeader for that name alone)",
    undo: [
      {
        file: 'common/http/send-json-stream.js',
        now: '(0, json_content_type_1.setJsonContentType)(res);',
        before: "res.type('application/json');",
      },
      {
        file: 'orders/pages/order-page.js',
        now: '(0, json_content_type_1.setJsonContentType)(res);',
        before: "res.type('application/json');",
      },
    ],
  },
  {
    name: "security headers: helmet's middleware chain per request (not precomputed)",
    undo: [
      {
        file: 'app.setup.js',
        now: '(0, static_headers_1.setStaticHeaders)(apiSecurityHeaders),',
        before: `(0, helmet_1.default)(${API_HELMET_OPTIONS}),`,
      },
    ],
  },
  {
    name: 'every-request middleware as four router layers (not one)',
    undo: [
      {
        file: 'app.setup.js',
        now: 'app.use((0, one_layer_1.inOneLayer)([',
        before: 'app.use(...([',
      },
    ],
  },
  {
    name: 'guards read the request through `switchToHttp()` (three closures per call)',
    undo: [
      {
        file: 'common/http/http-context.js',
        now: 'return context.getArgByIndex(0);',
        before: 'return context.switchToHttp().getRequest();',
      },
      {
        file: 'common/http/http-context.js',
        now: 'return context.getArgByIndex(1);',
        before: 'return context.switchToHttp().getResponse();',
      },
    ],
  },
  {
    name: 'order id always parsed through BigInt (no fast path for 15 digits or fewer)',
    undo: [
      { file: 'common/int64.js', now: 'if (text.length <= SAFE_LENGTH)', before: 'if (false)' },
    ],
  },
  {
    name: "requests and responses without their properties declared (Node's own classes)",
    undo: [
      {
        file: 'app.setup.js',
        now: 'new http_server_1.ApiExpressAdapter(instance)',
        before: "new (require('@nestjs/platform-express').ExpressAdapter)(instance)",
      },
    ],
  },
  {
    name: 'statements sent unnamed (parsed and planned by PostgreSQL on every request)',
    undo: [
      {
        file: 'database/statements.js',
        now: '(0, statement_call_1.configInheriting)(statement), values',
        before: '{ text: statement.text, rowMode: statement.rowMode }, values',
      },
    ],
  },
  {
    name: "query configs with the statement's fields as their own properties (pg copies each)",
    undo: [
      {
        file: 'database/statements.js',
        now: '(0, statement_call_1.configInheriting)(statement), values',
        before: '{ ...statement, values }',
      },
    ],
  },
  {
    name: 'limits in Redis: no leases (one script per request, auto-pipelined)',
    redis: true,
    undo: [
      {
        file: 'rate-limit/redis-rate-limit.storage.js',
        now: 'const lease = this.leases.wants(tracker) ? budget_leases_1.MAX_LEASE : 0;',
        before: 'const lease = 0;',
      },
    ],
  },
  {
    name: 'limits in Redis: no leases, no auto-pipelining',
    redis: true,
    undo: [
      {
        file: 'rate-limit/redis-rate-limit.storage.js',
        now: 'const lease = this.leases.wants(tracker) ? budget_leases_1.MAX_LEASE : 0;',
        before: 'const lease = 0;',
      },
      {
        file: 'redis/redis.module.js',
        now: 'enableAutoPipelining: true',
        before: 'enableAutoPipelining: false',
      },
    ],
  },
];

/** A copy of dist/ with the change undone, using the repository's node_modules. */
export function buildWithout(change: Change, root: string, index: number | string): string {
  const dir = join(root, `undo-${index}`);
  mkdirSync(dir);
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  for (const { file, now, before } of change.undo) {
    const path = join(dir, 'dist', file);
    const text = readFileSync(path, 'utf8');
    if (!text.includes(now)) throw new Error(`${change.name}: "${now}" is not in dist/${file}`);
    writeFileSync(path, text.replace(now, before));
  }
  return dir;
}
