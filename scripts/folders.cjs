/**
 * The folders of src/ and the direction of their imports, written once: .dependency-cruiser.cjs
 * makes the lint's rules of it (`npm run lint` refuses any other import between folders), and
 * `npm run generate` draws it in docs/architecture.md ("Folder dependencies").
 *
 * The layers are named here, each with what it may import. Every other folder is a feature
 * module, placed by no line: it may import FEATURES_MAY_IMPORT, and of another feature only what
 * that feature declares for the others (DECLARATIONS: its audit actions, the objects of its
 * events, its error codes, scopes and settings). Specs are left out: a unit spec may assemble
 * what it tests from anywhere.
 */
const LAYERS = {
  // Wrappers over Node's and libraries' internals: nothing of the application.
  platform: [],
  // defineSettings, the loader of modules' declarations, the generated docs' sections.
  config: [],
  // Filters, HTTP helpers and the HTTP server's settings, error codes, int64: no feature.
  common: ['config', 'platform'],
  plans: [],
  tracing: [],
  redis: ['config'],
  metrics: ['common', 'config', 'database', 'platform'],
  database: ['common', 'config', 'platform'],
  audit: ['common', 'database'],
  auth: ['audit', 'common', 'config', 'database', 'plans'],
  logging: ['auth', 'common', 'config', 'platform', 'tracing'],
  'rate-limit': ['auth', 'common', 'config', 'metrics', 'plans', 'platform', 'redis'],
  // Load shedding at the door: the API's first middleware, reading the key cache and routes.
  overload: ['auth', 'common', 'config', 'metrics', 'rate-limit'],
  guards: ['auth', 'rate-limit'],
  openapi: ['auth', 'common', 'config', 'overload', 'plans', 'rate-limit'],
  health: ['auth', 'common', 'config', 'database', 'metrics', 'redis'],
  cli: ['audit', 'auth', 'common', 'config', 'database', 'plans'],
  // The relay of committed audit events to the consumers modules declare, and pg-boss.
  events: ['audit', 'common', 'config', 'database', 'metrics', 'platform'],
  // What a module's routes on the admin API share: their declaration (found by the admin
  // application), the body checks, the admin API's error codes.
  'admin-routes': ['common', 'config'],
  // The admin application: the API application's setup (app.setup.ts) and the layers it serves;
  // the modules' admin routes are found at start, never imported.
  admin: [
    'admin-routes',
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
  ],
};

/** What a feature module may import of the layers. */
const FEATURES_MAY_IMPORT = [
  'admin-routes',
  'audit',
  'auth',
  'common',
  'config',
  'database',
  'events',
  'metrics',
  'openapi',
  'platform',
];

/** The files of a feature that other features may import: `<name>.<kind>.ts`. */
const DECLARATIONS = ['audit', 'errors', 'events', 'scopes', 'settings'];

module.exports = { LAYERS, FEATURES_MAY_IMPORT, DECLARATIONS };
