import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type express from 'express';

/*
 * The platform layer's HTTP server: private parts of Node's `http` (`_eventsCount`,
 * `_maxRequestsPerSocket`), of Express (`_parsedUrl`, its prototype swap) and Nest
 * (`initHttpServer`) are named here and nowhere else. Each is checked against the assembled
 * application by test/platform.e2e-spec.ts; what to check on an upgrade: docs/upgrading.md.
 */

/**
 * What the service's layers set on a request while serving it: `id` (X-Request-Id, logging),
 * `auth` and `authFailure` (the key, auth), `rateLimited` (rate-limit).
 */
export const REQUEST_PROPERTIES = ['id', 'auth', 'authFailure', 'rateLimited'] as const;

/** What Express 5 (its `app.handle` and router) sets on every request it routes. */
export const EXPRESS_REQUEST_PROPERTIES = [
  'res',
  'next',
  'baseUrl',
  'originalUrl',
  '_parsedUrl',
  'params',
  'route',
] as const;

/**
 * What a response gets once it is served: `statusCode` and `statusMessage` (Node keeps them on
 * its prototype until the status is set), Express's `locals`, and `_maxRequestsPerSocket`, which
 * Node's server sets on each response right after creating it.
 */
export const RESPONSE_PROPERTIES = [
  'statusCode',
  'statusMessage',
  'locals',
  '_maxRequestsPerSocket',
] as const;

/**
 * Node's request, born with every property Express and the service's layers give it while serving
 * it. V8 gives an object a new hidden class (map) for each property added after it is created,
 * and Express gives every request a new prototype besides, so each such addition, and each later
 * read of a property so added, is a slow lookup instead of a fixed offset. Declared here (all
 * `undefined`, as they read before being set), they are stored in place: the largest single
 * gain of the service over stock NestJS on small requests (docs/performance.md).
 *
 * A property that another module sets without being declared here works as usual, only slower
 * to store and to read.
 */
export class ApiRequest extends IncomingMessage {
  constructor(socket: Socket) {
    super(socket);
    const request = this as unknown as Record<
      (typeof REQUEST_PROPERTIES)[number] | (typeof EXPRESS_REQUEST_PROPERTIES)[number],
      unknown
    >;
    request.id = undefined;
    request.auth = undefined;
    request.authFailure = undefined;
    request.rateLimited = undefined;
    request.res = undefined;
    request.next = undefined;
    request.baseUrl = undefined;
    request.originalUrl = undefined;
    request._parsedUrl = undefined;
    request.params = undefined;
    request.route = undefined;
    // A stream reads its listener count from EventEmitter's prototype (0) until its first
    // listener: own from the start, its first `on()` changes no hidden class.
    (this as unknown as { _eventsCount: number })._eventsCount = 0;
  }
}

/** Node's response, born with {@link RESPONSE_PROPERTIES}: see {@link ApiRequest}. */
export class ApiResponse extends ServerResponse<ApiRequest> {
  constructor(...args: ConstructorParameters<typeof ServerResponse<ApiRequest>>) {
    super(...args);
    const response = this as unknown as Record<(typeof RESPONSE_PROPERTIES)[number], unknown>;
    response.statusCode = 200;
    response.statusMessage = undefined;
    response.locals = undefined;
    response._maxRequestsPerSocket = undefined;
  }
}

/**
 * `cls`, for `node:http` to call with `new`, except that what it makes has `prototype` from the
 * start instead of `cls.prototype`. Express gives every request and response its application's
 * prototype (`Object.setPrototypeOf` in `app.handle`), which changes the object's hidden class
 * once more, after Node has used it and before every layer after does: made with that prototype,
 * the object keeps one hidden class from birth to end, and Express's call changes nothing.
 */
function withInstancePrototype<C extends new (...args: never[]) => object>(
  cls: C,
  prototype: object,
): C {
  function Born(this: object, ...args: ConstructorParameters<C>): object {
    return Reflect.construct(cls, args, new.target) as object;
  }
  Born.prototype = prototype;
  return Born as unknown as C;
}

/**
 * Nest's Express adapter, serving through a `node:http` server made with {@link ApiRequest} and
 * {@link ApiResponse}, born with the Express application's request and response prototypes.
 * Nest's own server where it has a setting to apply that this service never sets (HTTPS,
 * `forceCloseConnections`, `return503OnClosing`).
 */
export class ApiExpressAdapter extends ExpressAdapter {
  /** Set once Nest has asked this adapter for its server, as Nest 12 does while creating the app. */
  private initialised = false;

  override initHttpServer(options: NestApplicationOptions): void {
    this.initialised = true;
    if (options.httpsOptions || options.forceCloseConnections || options.return503OnClosing) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<express.Express>();
    this.setHttpServer(
      createServer(
        {
          IncomingMessage: withInstancePrototype(ApiRequest, app.request),
          ServerResponse: withInstancePrototype(ApiResponse, app.response),
        },
        app,
      ),
    );
  }

  /**
   * Throws unless Nest made its server through {@link initHttpServer}: a Nest that no longer
   * calls it would serve stock requests, correct but slower, and nothing else would tell.
   */
  assertInitialised(): void {
    if (!this.initialised) {
      throw new Error(
        'Nest did not call ApiExpressAdapter.initHttpServer: the server is not the one of ' +
          'src/platform/http-server.ts (see docs/upgrading.md)',
      );
    }
  }
}
