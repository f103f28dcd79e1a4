import type { ConfigType } from '@nestjs/config';
import { defineSettings, integer } from '../config/settings';

/** The API keys' own environment variables. */
export const authSettings = defineSettings('auth', {
  KEY_CACHE_TTL_MS: {
    rule: integer({ min: 500, max: 5000 }),
    default: 5000,
    description:
      "how long a cached key is used without asking the database while the [key changes feed](keys.md#how-soon-a-change-reaches-every-instance) cannot vouch for it: the bound on how long a key's revocation, ban, unban or expiry change takes to reach every instance. At most 5000; shorter costs more key lookups when the feed is down",
  },
});
export type AuthSettings = ConfigType<typeof authSettings>;
