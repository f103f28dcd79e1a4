import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { KeyLookupBudget } from './key-lookup-budget';
import type { ApiException } from '../common/errors/api.exception';
import { ErrorResponseHook } from '../common/errors/error-response-hook';
import { RateLimitService } from './rate-limit.service';

/**
 * Errors raised before the guards (unknown path, under `/v1` or not, 405, 413, a database outage
 * while resolving the key) are counted and get their rate-limit headers too; over the limit, the
 * 429 is the answer. Errors of public routes (a 503 of readiness) are not counted.
 */
@Injectable()
@ErrorResponseHook()
export class RateLimitErrorsHook implements ErrorResponseHook {
  constructor(
    private readonly keyLookups: KeyLookupBudget,
    private readonly rateLimit: RateLimitService,
  ) {}

  /** Nothing to do for a request already counted, or of a public route. */
  async beforeErrorResponse(
    error: ApiException,
    req: Request,
    res: Response,
  ): Promise<ApiException | undefined> {
    if (this.rateLimit.isCounted(req)) return undefined;
    try {
      await this.keyLookups.decideKey(req);
    } catch {
      // Recorded on the request as authFailure 'unavailable'.
    }
    return this.rateLimit.countErrorResponse(req, res, error.getStatus());
  }
}
