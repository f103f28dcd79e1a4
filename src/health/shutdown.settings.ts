import type { ConfigType } from '@nestjs/config';
import { defineSettings, integer } from '../config/settings';

/** How the process stops on SIGTERM: readiness first, then the listener, within a deadline. */
export const shutdownSettings = defineSettings('shutdown', {
  SHUTDOWN_DRAIN_DELAY_MS: {
    rule: integer({ min: 0 }),
    default: 0,
    description: 'after SIGTERM, how long readiness answers 503 before the listener closes',
  },
  SHUTDOWN_TIMEOUT_MS: {
    rule: integer({ min: 1000 }),
    default: 25000,
    description: 'hard deadline for a shutdown; past it the process exits with status 1',
  },
});
export type ShutdownSettings = ConfigType<typeof shutdownSettings>;
