/**
 * Which folder of src/ may import which: the allowed direction of each, written once. Lint
 * (`npm run lint`) refuses any other import between folders, so no two folders depend on each
 * other. Drawn in docs/architecture.md ("Layout and rules"); a new feature folder gets a line here.
 * Specs are left out: a unit spec may assemble what it tests from anywhere.
 */
const MAY_IMPORT = {
  // Wrappers over Node's and libraries' internals: nothing of the application.
  platform: [],
  // defineSettings and the start-up validation of every module's settings.
  config: [],
  // Filters, HTTP helpers and the HTTP server's settings, error codes, int64: no feature.
  common: ['config', 'platform'],
  plans: [],
  tracing: [],
  redis: ['config'],
  metrics: ['common', 'config', 'database', 'platform'],
  database: ['common', 'config', 'platform'],
  audit: ['common', 'database'],
  // Features.
  auth: ['audit', 'common', 'config', 'database', 'plans'],
  logging: ['auth', 'common', 'config', 'platform', 'tracing'],
  'rate-limit': ['auth', 'common', 'config', 'metrics', 'plans', 'platform', 'redis'],
  // Load shedding: the API's first middleware, reading the key cache and, for a refusal, where
  // the client's rate-limit window stands.
  overload: ['auth', 'common', 'config', 'metrics', 'rate-limit'],
  guards: ['auth', 'rate-limit'],
  openapi: ['auth', 'common', 'config', 'overload', 'plans', 'rate-limit'],
  health: ['auth', 'common', 'config', 'database', 'metrics', 'redis'],
  orders: ['audit', 'auth', 'common', 'config', 'database', 'openapi', 'platform'],
  cli: ['audit', 'auth', 'common', 'config', 'database', 'plans'],
  // The relay of committed audit events to the consumers modules declare, and pg-boss.
  events: ['audit', 'common', 'config', 'database', 'metrics', 'platform'],
  // Webhooks: a consumer of the relayed events (their objects as the emitting modules declare
  // them), and a scope of their own (auth's declarations).
  webhooks: ['audit', 'auth', 'common', 'config', 'database', 'events', 'metrics', 'platform'],
  // The admin application: the API application's setup (app.setup.ts) and the features it serves.
  admin: [
    'app',
    'audit',
    'auth',
    'common',
    'config',
    'database',
    'guards',
    'logging',
    'metrics',
    'openapi',
    'plans',
    'rate-limit',
    'webhooks',
  ],
};

/**
 * The application's own files at the top of src/ (app.module.ts, app.setup.ts): no admin, no
 * main. Beside them, main.ts and its parts (main.environment.ts, main.shutdown.ts) start the
 * process: above everything, imported by nothing (no folder's line lists them).
 */
const APP_FILES = '^src/app[.][^/]+$';

const folder = (name) => (name === 'app' ? APP_FILES : `^src/${name}/`);

module.exports = {
  forbidden: [
    ...Object.entries(MAY_IMPORT).map(([from, allowed]) => ({
      name: `${from}-imports`,
      comment: `src/${from}/ may import only ${allowed.length ? allowed.join(', ') : 'libraries'}`,
      severity: 'error',
      from: { path: `^src/${from}/`, pathNot: '[.]spec[.]ts$' },
      to: {
        path: '^src/',
        pathNot: [`^src/${from}/`, ...allowed.map(folder)],
      },
    })),
    {
      name: 'app-imports',
      comment:
        'the application (app.*.ts) is assembled from the features, never from admin or main.*',
      severity: 'error',
      from: { path: APP_FILES },
      to: { path: ['^src/admin/', '^src/main[.]'] },
    },
    {
      name: 'unknown-folder',
      comment: 'a folder of src/ that .dependency-cruiser.cjs does not place: give it a line there',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: `^src/(${Object.keys(MAY_IMPORT).join('|')})/` },
      to: {},
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
  },
};
