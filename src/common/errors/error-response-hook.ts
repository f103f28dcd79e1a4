import { DiscoveryService } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { ApiException } from './api.exception';

/**
 * How a feature takes part in turning errors into responses, without the exception filter
 * knowing the feature. A provider of the feature's module implements one or both methods and is
 * marked `@ErrorResponseHook()`; the filter finds every such provider at start (Nest's
 * DiscoveryService), so nothing in `common/` imports a feature.
 *
 * - `toApiException`: an error this feature recognises (the database's "unreachable") becomes the
 *   API error to answer; `undefined` for any other. The first hook that answers wins.
 * - `beforeErrorResponse`: runs before any error response is sent (the rate limiter counts
 *   requests refused before its guard, and sets its headers); may return another error to answer
 *   instead (its 429). Only on the error path: nothing here runs for a successful request.
 */
export interface ErrorResponseHook {
  toApiException?(exception: unknown, req: Request): ApiException | undefined;
  beforeErrorResponse?(
    error: ApiException,
    req: Request,
    res: Response,
  ): Promise<ApiException | undefined>;
}

/** Marks a provider as an {@link ErrorResponseHook}. */
export const ErrorResponseHook = DiscoveryService.createDecorator<undefined>();
