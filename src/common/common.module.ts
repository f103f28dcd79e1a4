import { Module } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import { AllExceptionsFilter } from './errors/all-exceptions.filter';
import { ApiRoutesFirst } from './http/api-routes-first';
import { RouteNotFoundHandler } from './http/route-not-found.handler';
import { RouteTable } from './http/route-table';

/**
 * What every feature relies on and none owns: the exception filter (features join it through
 * `@ErrorResponseHook()` providers), the table of served routes, the 404/405 of a request no
 * route matched, and the API's routes tried first.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    RouteTable,
    RouteNotFoundHandler,
    ApiRoutesFirst,
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
  exports: [RouteTable],
})
export class CommonModule {}
