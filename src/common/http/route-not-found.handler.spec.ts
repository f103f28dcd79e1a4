import type { HttpAdapterHost } from '@nestjs/core';
import { RouteNotFoundHandler } from './route-not-found.handler';
import type { RouteTable } from './route-table';

function handlerRecording(order: string[]): RouteNotFoundHandler {
  const adapterHost = {
    httpAdapter: { use: () => order.push('not-found handler') },
  } as unknown as HttpAdapterHost;
  return new RouteNotFoundHandler(adapterHost, {} as RouteTable);
}

describe('RouteNotFoundHandler', () => {
  it('mounts what follows the controllers first, in order, then itself', () => {
    const order: string[] = [];
    const handler = handlerRecording(order);
    handler.afterControllers(() => order.push('documents'));
    handler.afterControllers(() => order.push('Swagger UI'));
    expect(order).toEqual([]);

    handler.onModuleInit();
    expect(order).toEqual(['documents', 'Swagger UI', 'not-found handler']);
  });

  it('refuses a mount once the application is initialised: it could only follow the 404', () => {
    const handler = handlerRecording([]);
    handler.onModuleInit();
    expect(() => handler.afterControllers(() => undefined)).toThrow(/before the application/);
  });
});
