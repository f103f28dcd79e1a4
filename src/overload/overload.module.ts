import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { CommonModule } from '../common/common.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { AdmissionControl } from './admission-control';
import { AdmissionMiddleware } from './admission.middleware';
import { Gradient2Limit, GRADIENT2_DEFAULTS } from './gradient2-limit';
import { LoopDelay } from './loop-delay';
import { overloadSettings, type OverloadSettings } from './overload.settings';
import { ShedReport } from './shed-report';

/**
 * Load shedding: the API's first middleware ({@link AdmissionMiddleware}, placed by
 * `configureApp`) refuses what the instance cannot serve in time, by criticality, under an
 * adaptive concurrency limit. Owns its settings, its error code and its metrics.
 */
@Module({
  imports: [CommonModule, RateLimitModule, ConfigModule.forFeature(overloadSettings)],
  providers: [
    // No timer at all while shedding is off: nothing would read it.
    {
      provide: LoopDelay,
      inject: [overloadSettings.KEY],
      useFactory: (settings: OverloadSettings) =>
        settings.OVERLOAD_SHEDDING === 'on' ? new LoopDelay() : null,
    },
    {
      provide: AdmissionControl,
      inject: [overloadSettings.KEY, LoopDelay],
      useFactory: (settings: OverloadSettings, loopDelay: LoopDelay | null) =>
        new AdmissionControl(
          new Gradient2Limit({
            ...GRADIENT2_DEFAULTS,
            minLimit: settings.OVERLOAD_MIN_CONCURRENCY,
            maxLimit: settings.OVERLOAD_MAX_CONCURRENCY,
          }),
          loopDelay?.read ?? (() => 0),
          settings.OVERLOAD_MAX_LOOP_DELAY_MS,
        ),
    },
    ShedReport,
    AdmissionMiddleware,
  ],
  exports: [AdmissionControl, AdmissionMiddleware],
})
export class OverloadModule {}
