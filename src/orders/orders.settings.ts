import type { ConfigType } from '@nestjs/config';
import { defineSettings, integer, pattern } from '../config/settings';

/**
 * The orders module's own environment variables (v2's pages): `ConfigModule.forFeature(orderSettings)`
 * in OrdersModule; injected as `@Inject(orderSettings.KEY) settings: OrderSettings`.
 */
export const orderSettings = defineSettings('orders', {
  CURSOR_SECRET: {
    rule: pattern(
      /^\S{32,}$/,
      'at least 32 characters without spaces, e.g. openssl rand -base64 32',
    ),
    sensitive: true,
    description:
      "the secret v2's cursors are signed with (HMAC-SHA-256), at least 32 characters without spaces (`openssl rand -base64 32`); the same on every instance of a deployment. Unset: the secret the migrations generated into the database (table `order_cursor_secret`), which every instance reads alike. Changing it refuses every cursor issued before (clients start their walks again)",
  },
  PAGE_DATABASE_BUDGET_MS: {
    rule: integer({ min: 50 }),
    default: 1000,
    description:
      "database time one v2 page may take in all, waiting for a connection included (at least 50): a quarter of it for the wait, the rest for the page's statement (its connection's `statement_timeout`); past either, the page is answered 503 with `Retry-After`, its statement cancelled, and logged once at `warn` with its route and shape",
  },
  PAGE_POOL_SIZE: {
    rule: integer({ min: 1, max: 200 }),
    default: 5,
    description:
      "connections per instance for v2's pages (1 to 200), apart from the pool of `DATABASE_POOL_SIZE`: each is opened with a page's settings (read-only, the planner settings, the budget's statement timeout) so that a page is one statement ([Performance](performance.md#v2-every-shape-bounded)); opened and warmed (the first page of each sort) at start, before the instance listens, and kept open, so a page never waits for a connection being opened nor pays for its first statement",
  },
});
export type OrderSettings = ConfigType<typeof orderSettings>;
