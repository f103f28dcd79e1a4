import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { isPublic } from '../auth/public.decorator';
import { RateLimitService } from './rate-limit.service';
import { WindowSpec } from './rate-limit.storage';

/**
 * The ThrottlerModule's named throttlers (minute, day; limits from the request's plan), applied
 * together: the stock guard checks them one after the other, so a request refused by the day
 * window would already have counted in the minute window. Its per-throttler headers (suffixed,
 * reset in seconds-until) and its exception body are replaced by the contract's.
 */
@Injectable()
export class PlanThrottlerGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly rateLimit: RateLimitService,
  ) {
    super(options, storage, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (isPublic(this.reflector, context)) return true;
    const windows: WindowSpec[] = await Promise.all(
      this.throttlers.map(async (throttler) => ({
        name: throttler.name ?? 'default',
        limit: await resolve(throttler.limit, context),
        ttlMs: await resolve(throttler.ttl, context),
      })),
    );
    const http = context.switchToHttp();
    await this.rateLimit.admit(http.getRequest<Request>(), http.getResponse<Response>(), windows);
    return true;
  }
}

async function resolve(
  value: number | ((context: ExecutionContext) => number | Promise<number>),
  context: ExecutionContext,
): Promise<number> {
  return typeof value === 'function' ? value(context) : value;
}
