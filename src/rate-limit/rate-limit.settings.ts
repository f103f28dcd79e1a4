import type { ConfigType } from '@nestjs/config';
import { defineSettings, integer } from '../config/settings';

export const rateLimitSettings = defineSettings('rate-limit', {
  RATE_LIMIT_BAN_AFTER: {
    rule: integer({ min: 1 }),
    default: 60,
    description: 'rejected requests tolerated before a key (or IP) is banned',
  },
  RATE_LIMIT_BAN_SECONDS: {
    rule: integer({ min: 1 }),
    default: 900,
    description: 'length of a ban',
  },
  RATE_LIMIT_ANONYMOUS_TRACKERS: {
    rule: integer({ min: 1 }),
    default: 100_000,
    description:
      "in-process limiter: anonymous clients (IPs) whose counters are kept at once, the least recently seen going first; keys' counters are kept apart and never pushed out",
  },
});
export type RateLimitSettings = ConfigType<typeof rateLimitSettings>;
