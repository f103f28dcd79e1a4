import type { ConfigType } from '@nestjs/config';
import { defineSettings, integer } from '../config/settings';

export const metricsSettings = defineSettings('metrics', {
  METRICS_PORT: {
    rule: integer({ min: 0, max: 65535 }),
    description:
      "port of a separate listener serving Prometheus `GET /metrics`, on `HOST`'s address; unset: no metrics served",
  },
});
export type MetricsSettings = ConfigType<typeof metricsSettings>;
