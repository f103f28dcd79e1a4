/**
 * The lint's rules for imports between the folders of src/, made from scripts/folders.cjs (where
 * each layer's allowed direction is written once, and features need no line): `npm run lint`
 * refuses any other import, so no two folders depend on each other. Drawn in
 * docs/architecture.md ("Folder dependencies") from the same file by `npm run generate`.
 */
const { DECLARATIONS, FEATURES_MAY_IMPORT, LAYERS } = require('./scripts/folders.cjs');

/**
 * The application's own files at the top of src/ (app.module.ts, app.setup.ts): no admin, no
 * main. Beside them, main.ts and its parts (main.environment.ts, main.shutdown.ts) start the
 * process: above everything, imported by nothing (no folder's line lists them).
 */
const APP_FILES = '^src/app[.][^/]+$';

const folder = (name) => (name === 'app' ? APP_FILES : `^src/${name}/`);
const SPEC = '[.]spec[.]ts$';
const LAYER_FOLDERS = `^src/(${Object.keys(LAYERS).join('|')})/`;
/**
 * The folders' rules weigh what runs: an import of types alone (`import type`) is not a
 * dependency between them. The database rule weighs those too.
 */
const RUNTIME = { dependencyTypesNot: ['type-only'] };
module.exports = {
  forbidden: [
    ...Object.entries(LAYERS).map(([from, allowed]) => ({
      name: `${from}-imports`,
      comment: `src/${from}/ may import only ${allowed.length ? allowed.join(', ') : 'libraries'}`,
      severity: 'error',
      from: { path: `^src/${from}/`, pathNot: SPEC },
      to: {
        path: '^src/',
        pathNot: [`^src/${from}/`, ...allowed.map(folder)],
        ...RUNTIME,
      },
    })),
    {
      name: 'feature-imports',
      comment:
        `a feature may import only ${FEATURES_MAY_IMPORT.join(', ')}, and of another feature ` +
        `its declarations (*.{${DECLARATIONS.join(',')}}.ts)`,
      severity: 'error',
      from: { path: '^src/([^/]+)/', pathNot: [LAYER_FOLDERS, SPEC] },
      to: {
        path: '^src/',
        pathNot: [
          '^src/$1/',
          ...FEATURES_MAY_IMPORT.map(folder),
          `^src/[^/]+/[^/]+[.](${DECLARATIONS.join('|')})[.]ts$`,
        ],
        ...RUNTIME,
      },
    },
    {
      name: 'database-access',
      comment:
        'only src/database/ imports the PostgreSQL driver (pg) or reaches the pool under ' +
        'TypeORM (src/platform/pg-pool.ts): a feature runs its SQL in its repositories, on ' +
        'what src/database/ offers (statementRows, StatementPool, TypeORM)',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: ['^src/(database|platform)/', SPEC],
      },
      to: {
        path: [
          '^node_modules/(@types/)?(pg|pg-pool|pg-cursor|pg-query-stream)/',
          '^src/platform/pg-pool[.]ts$',
        ],
      },
    },
    {
      name: 'no-circular',
      comment:
        'no module of src/ imports itself, however far round: two features (or two files of one) ' +
        'that need each other are one, or share something that belongs in a layer',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'app-imports',
      comment:
        'the application (app.*.ts) is assembled from the features, never from admin or main.*',
      severity: 'error',
      from: { path: APP_FILES },
      to: { path: ['^src/admin/', '^src/main[.]'], ...RUNTIME },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports are seen (`import type { Pool } from 'pg'` is a reach for the pool).
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
  },
};
