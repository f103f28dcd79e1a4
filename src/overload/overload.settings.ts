import type { ConfigType } from '@nestjs/config';
import { defineSettings, integer, oneOf } from '../config/settings';

/**
 * Load shedding's environment variables: `ConfigModule.forFeature(overloadSettings)` in
 * OverloadModule. The limit itself is not a setting: it follows the measured latency.
 */
export const overloadSettings = defineSettings(
  'overload',
  {
    OVERLOAD_SHEDDING: {
      rule: oneOf(['on', 'off']),
      default: 'off',
      description:
        'whether requests past the adaptive concurrency limit are refused at once, at the door, with 503 `OVERLOADED` and `Retry-After` (`on`), or all let in to wait their turn (`off`, the default while the refusals on a saturated machine are not yet answered within their target: see docs/operating.md). Health probes, the admin listener and `/metrics` are never refused',
    },
    OVERLOAD_MIN_CONCURRENCY: {
      rule: integer({ min: 1, max: 10000 }),
      default: 4,
      description:
        'the fewest API requests in flight the adaptive limit ever allows, however slow the answers (1 to 10,000)',
    },
    OVERLOAD_MAX_CONCURRENCY: {
      rule: integer({ min: 1, max: 10000 }),
      default: 200,
      description:
        'the most API requests in flight the adaptive limit ever allows, however fast the answers (1 to 10,000; at least `OVERLOAD_MIN_CONCURRENCY`)',
    },
    OVERLOAD_MAX_LOOP_DELAY_MS: {
      rule: integer({ min: 1, max: 1000 }),
      default: 10,
      description:
        'how late the event loop may run, in ms (the median lag of a 10-ms timer over a window of answers), before the adaptive limit shrinks, once it has run that late for a second: past it, requests wait unread in their sockets (1 to 1,000)',
    },
    OVERLOAD_RETRY_AFTER_SECONDS: {
      rule: integer({ min: 1, max: 3600 }),
      default: 1,
      description: 'the `Retry-After` of a request refused as overloaded, in seconds',
    },
    OVERLOAD_LOG_INTERVAL_MS: {
      rule: integer({ min: 100 }),
      default: 10000,
      description:
        'how often, at most, refused requests are logged: one `warn` line per interval with their counts by route (at least 100)',
    },
  },
  (values) =>
    values.OVERLOAD_MAX_CONCURRENCY < values.OVERLOAD_MIN_CONCURRENCY
      ? ['OVERLOAD_MAX_CONCURRENCY must be at least OVERLOAD_MIN_CONCURRENCY']
      : [],
);
export type OverloadSettings = ConfigType<typeof overloadSettings>;
