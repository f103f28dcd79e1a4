import type { ConfigType } from '@nestjs/config';
import { defineSettings, oneOf } from '../config/settings';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const loggingSettings = defineSettings('logging', {
  LOG_LEVEL: {
    rule: oneOf(LOG_LEVELS),
    default: 'info',
    description: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`',
  },
});
export type LoggingSettings = ConfigType<typeof loggingSettings>;
