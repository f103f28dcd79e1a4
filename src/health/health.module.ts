import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { Readiness } from './readiness';
import { RedisHealthIndicator } from './redis.health';
import { ShutdownState } from './shutdown-state';

@Module({
  // The controller logs failed checks itself, once, through pino.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [RedisHealthIndicator, ShutdownState, Readiness],
  exports: [ShutdownState],
})
export class HealthModule {}
