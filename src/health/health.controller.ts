import { Controller, Get, ServiceUnavailableException, VERSION_NEUTRAL } from '@nestjs/common';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator';
import { ApiException } from '../common/errors/api.exception';
import { CommonErrors } from '../common/errors/error-code';
import { downIn, Readiness } from './readiness';

/** What a load balancer or orchestrator should wait before asking again. */
const NOT_READY_RETRY_AFTER_SECONDS = '5';

/**
 * Probes for orchestrators and load balancers: public, not rate limited, outside `/v1`.
 * Liveness says the process answers; readiness says it can serve (database, Redis when
 * configured, and not shutting down), else 503 `SERVICE_UNAVAILABLE` like any other error.
 * Not in the OpenAPI document, whose paths are all relative to `/v1`.
 */
@Public()
@ApiExcludeController()
@Controller({ path: 'health', version: VERSION_NEUTRAL })
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly readiness: Readiness,
  ) {}

  @Get('live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  async ready(): Promise<HealthCheckResult> {
    if (this.readiness.shutdown.isShuttingDown) throw notReady('the service is shutting down');
    try {
      return await this.readiness.checkDependencies();
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      // Terminus answers 503 with its own body; the API's errors all share one shape. The
      // check logged it, once for every caller that shares it.
      const down = downIn(error.getResponse() as Partial<HealthCheckResult>);
      throw notReady(`${down.join(' and ')} unavailable`);
    }
  }
}

function notReady(reason: string): ApiException {
  return new ApiException(CommonErrors.SERVICE_UNAVAILABLE, `Not ready: ${reason}`, {
    'Retry-After': NOT_READY_RETRY_AFTER_SECONDS,
  });
}
