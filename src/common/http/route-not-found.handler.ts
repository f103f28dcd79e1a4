import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { ApiException } from '../errors/api.exception';
import { CommonErrors } from '../errors/error-code';
import { RouteTable } from './route-table';

/**
 * Where "no route matched" is known: the handler after the router. Express has no 405 of its own
 * (a known path with another method falls through like an unknown path), so this tells the two
 * apart with the {@link RouteTable} and passes the 404 or the 405 (with `Allow`) to the exception
 * filter. A 404 thrown by a handler never gets here and keeps its meaning.
 *
 * Mounted from `onModuleInit`: Nest's `init()` registers the routes, then runs the init hooks,
 * then mounts its own not-found handler, so this one sits between the two and Nest's is never
 * reached (nestjs/nest packages/core/nest-application.ts, `init`). What was given to
 * {@link afterControllers} (the OpenAPI documents and Swagger UI) is mounted there first: after
 * the controllers' routes, so that an API request is not matched against their layers first.
 */
@Injectable()
export class RouteNotFoundHandler implements OnModuleInit {
  private mounts: (() => void)[] | undefined = [];

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly routes: RouteTable,
  ) {}

  /** Mounts routes or middleware after the controllers' routes, before this handler. */
  afterControllers(mount: () => void): void {
    if (!this.mounts) {
      throw new Error('afterControllers() must be called before the application is initialised');
    }
    this.mounts.push(mount);
  }

  onModuleInit(): void {
    const mounts = this.mounts ?? [];
    this.mounts = undefined;
    for (const mount of mounts) mount();
    this.adapterHost.httpAdapter.use((req: Request, _res: Response, next: NextFunction) => {
      next(this.notMatched(req));
    });
  }

  notMatched(req: Request): ApiException {
    const allow = this.routes.allowedMethods(req.path);
    if (allow.length === 0) return new ApiException(CommonErrors.NOT_FOUND);
    return new ApiException(
      CommonErrors.METHOD_NOT_ALLOWED,
      `${req.method} is not allowed here; allowed: ${allow.join(', ')}`,
      { Allow: allow.join(', ') },
    );
  }
}
