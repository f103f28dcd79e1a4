import { VersioningType } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { AppConfig } from './config/app-config';
import { assignRequestId } from './logging/logging.module';
import { MetricsService } from './metrics/metrics.service';
import { requestMetrics } from './metrics/request-metrics.middleware';
import { setupOpenApi } from './openapi/openapi';

/** Parses TRUST_PROXY into the value Express's `trust proxy` setting takes. */
export function trustProxySetting(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}

/**
 * Everything about the HTTP application that is not a module: shared by `main.ts` and the
 * end-to-end tests, so the tests run the application exactly as it is served.
 */
export function configureApp(app: NestExpressApplication): NestExpressApplication {
  const config = app.get(AppConfig);
  app.useLogger(app.get(Logger));
  app.disable('x-powered-by');
  // First, so that every response has an id, every request is timed and every response gets the
  // headers, errors included.
  app.use(assignRequestId);
  app.use(requestMetrics(app.get(MetricsService)));
  app.use(
    helmet({
      // Swagger UI's "Try it out" calls this server at the address it was reached by; on a plain
      // http host (a staging box) the upgrade would send those calls to https and break them.
      contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
    }),
  );
  // Express's default ETag hashes every response body; clients of this API don't use it.
  app.set('etag', false);
  if (config.trustProxy !== undefined) app.set('trust proxy', trustProxySetting(config.trustProxy));
  app.enableVersioning({ type: VersioningType.URI });
  // The OpenAPI document at /openapi.json and Swagger UI at /docs: public, like health.
  setupOpenApi(app);
  return app;
}
