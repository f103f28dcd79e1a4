import type { ConfigType } from '@nestjs/config';
import { defineSettings, integer, text, url } from '../config/settings';

/** The database the service connects to (or the embedded one), and its pool's limits. */
export const databaseSettings = defineSettings('database', {
  DATABASE_URL: {
    rule: url({ protocols: ['postgres', 'postgresql'] }),
    sensitive: true,
    description:
      '`postgres://user:pass@host:5432/db`. Unset: the embedded PostgreSQL under `./.data`',
  },
  DATABASE_CONNECT_TIMEOUT_MS: {
    rule: integer({ min: 100 }),
    default: 3000,
    description: 'wait for a database connection before answering 503',
  },
  DATABASE_STATEMENT_TIMEOUT_MS: {
    rule: integer({ min: 100 }),
    default: 15000,
    description: 'server-side limit on any one statement (and lock wait)',
  },
  DATABASE_POOL_SIZE: {
    rule: integer({ min: 1, max: 200 }),
    default: 10,
    description:
      "connections per instance in its pool (each instance opens one more for [key changes](keys.md#how-soon-a-change-reaches-every-instance), up to `PAGE_POOL_SIZE` for v2's pages, and eight while it [delivers webhooks](webhooks.md#running-it))",
  },
  MIGRATION_LOCK_TIMEOUT_MS: {
    rule: integer({ min: 10 }),
    default: 3000,
    description:
      'how long any one migration statement may wait for a lock before it gives up (and the migration is tried again): the longest a request can queue behind a waiting migration',
  },
  MIGRATION_RETRIES: {
    rule: integer({ min: 0, max: 100 }),
    default: 10,
    description:
      'times a migration that gave up waiting for a lock is tried again, with a growing pause between tries, before the migration run fails',
  },
  EMBEDDED_DATABASE_DIR: {
    rule: text(),
    default: './.data',
    description: 'where the embedded PostgreSQL keeps its data',
  },
  EMBEDDED_DATABASE_PORT: {
    rule: integer({ min: 1, max: 65535 }),
    default: 54329,
    description: 'port of the embedded PostgreSQL',
  },
});
export type DatabaseEnvironment = ConfigType<typeof databaseSettings>;
