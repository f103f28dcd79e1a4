import { Global, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { httpSettings } from '../common/http/http.settings';
import { MetricsServer } from './metrics.server';
import { MetricsService } from './metrics.service';
import { metricsSettings } from './metrics.settings';

/** Global so that any feature (the rate limiter) can inject MetricsService and count. */
@Global()
@Module({
  imports: [ConfigModule.forFeature(metricsSettings), ConfigModule.forFeature(httpSettings)],
  providers: [MetricsService, MetricsServer],
  exports: [MetricsService, MetricsServer],
})
export class MetricsModule {}
