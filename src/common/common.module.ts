import { type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import { ApiLifecycleErrorsHook, applyApiLifecycle } from './api-lifecycle';
import { AllExceptionsFilter } from './errors/all-exceptions.filter';
import { RouteNotFoundHandler } from './http/route-not-found.handler';
import { RouteTable } from './http/route-table';

/**
 * What every feature relies on and none owns: the exception filter (features join it through
 * `@ErrorResponseHook()` providers), the table of served routes, the 404/405 of a request no
 * route matched, and the headers (or 410) of routes marked `@Stability` or `@Deprecated`.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    RouteTable,
    RouteNotFoundHandler,
    ApiLifecycleErrorsHook,
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
  exports: [RouteTable],
})
export class CommonModule implements NestModule {
  constructor(private readonly routes: RouteTable) {}

  configure(consumer: MiddlewareConsumer): void {
    applyApiLifecycle(consumer, this.routes.routes);
  }
}
