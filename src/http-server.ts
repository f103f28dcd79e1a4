import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type express from 'express';

/**
 * What the service's layers set on a request while serving it: `id` (X-Request-Id, logging),
 * `auth` and `authFailure` (the key, auth), `rateLimited` (rate-limit), and Express's `route`.
 */
export const REQUEST_PROPERTIES = ['id', 'auth', 'authFailure', 'rateLimited', 'route'] as const;

/**
 * Node's request, born with every property the service's layers give it while serving it. V8
 * gives an object a new hidden class (map) for each property added after it is created, and
 * Express gives every request a new prototype besides, so each such addition, and each later read
 * of a property so added, is a slow lookup instead of a fixed offset. Declared here, they are
 * stored in place. Measured in turns with bare NestJS (a copy of the build, cancel): 0.70× →
 * 0.80× with this class and {@link ApiResponse} (docs/performance.md).
 *
 * A property that another module sets without being declared here works as usual, only slower
 * to store and to read.
 */
export class ApiRequest extends IncomingMessage {
  constructor(socket: Socket) {
    super(socket);
    const request = this as unknown as Record<(typeof REQUEST_PROPERTIES)[number], unknown>;
    request.id = undefined;
    request.auth = undefined;
    request.authFailure = undefined;
    request.rateLimited = undefined;
    request.route = undefined;
  }
}

/**
 * Node's response, with the two properties Node keeps on its prototype until the status is set
 * (`statusCode` 200, `statusMessage` undefined) as its own from the start: see {@link ApiRequest}.
 */
export class ApiResponse extends ServerResponse<ApiRequest> {
  constructor(...args: ConstructorParameters<typeof ServerResponse<ApiRequest>>) {
    super(...args);
    this.statusCode = 200;
    this.statusMessage = undefined as unknown as string;
  }
}

/**
 * Nest's Express adapter, serving through a `node:http` server made with {@link ApiRequest} and
 * {@link ApiResponse}. Nest's own server where it has a setting to apply that this service never
 * sets (HTTPS, `forceCloseConnections`, `return503OnClosing`).
 */
export class ApiExpressAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.forceCloseConnections || options.return503OnClosing) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<express.Express>();
    this.setHttpServer(
      createServer({ IncomingMessage: ApiRequest, ServerResponse: ApiResponse }, app),
    );
  }
}
