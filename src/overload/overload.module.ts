import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AdmissionControl } from './admission-control';
import { AdmissionGuard } from './admission.guard';
import { Gradient2Limit, GRADIENT2_DEFAULTS } from './gradient2-limit';
import { overloadSettings, type OverloadSettings } from './overload.settings';
import { ShedReport } from './shed-report';

/**
 * Load shedding: the API's first guard ({@link AdmissionGuard}, placed in `app.module.ts`) refuses
 * what the instance cannot serve in time, by criticality, under an adaptive concurrency limit.
 * Owns its settings, its error code and its metrics.
 */
@Module({
  imports: [ConfigModule.forFeature(overloadSettings)],
  providers: [
    {
      provide: AdmissionControl,
      inject: [overloadSettings.KEY],
      useFactory: (settings: OverloadSettings) =>
        new AdmissionControl(
          new Gradient2Limit({
            ...GRADIENT2_DEFAULTS,
            minLimit: settings.OVERLOAD_MIN_CONCURRENCY,
            maxLimit: settings.OVERLOAD_MAX_CONCURRENCY,
          }),
        ),
    },
    ShedReport,
    AdmissionGuard,
  ],
  exports: [AdmissionControl, AdmissionGuard],
})
export class OverloadModule {}
