import type { ConfigType } from '@nestjs/config';
import { defineSettings, url } from '../config/settings';

export const redisSettings = defineSettings('redis', {
  REDIS_URL: {
    rule: url({ protocols: ['redis', 'rediss'] }),
    sensitive: true,
    description: '`redis://host:6379`: rate-limit counters and bans shared by every instance',
  },
});
export type RedisSettings = ConfigType<typeof redisSettings>;
