import type { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import express, { type Request } from 'express';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { limitRequestBodies } from './common/http/body-limit.middleware';
import { clientErrorAnswer } from './common/http/client-error-answer';
import { compressResponses } from './common/http/compression';
import { inOneLayer } from './common/http/one-layer';
import { RouteNotFoundHandler } from './common/http/route-not-found.handler';
import { headersSetBy, setStaticHeaders } from './common/http/static-headers';
import { API_VERSIONING } from './common/http/versioning';
import { httpSettings, type HttpSettings } from './common/http/http.settings';
import { answerClientErrors } from './platform/client-errors';
import { ApiExpressAdapter } from './platform/http-server';
import { REQUEST_LOG, ROOT_LOGGER } from './logging/logging.module';
import { observeRequests } from './logging/observe-requests';
import { requestId } from './logging/request-id';
import { AdmissionMiddleware } from './overload/admission.middleware';
import { MetricsService } from './metrics/metrics.service';
import { SWAGGER_UI_PATH } from './openapi/openapi-paths';
import { setupOpenApi } from './openapi/openapi-routes';
import { onlySwaggerUiFiles } from './openapi/swagger-ui-files';

/**
 * What every response carries: the headers OWASP's REST Security Cheat Sheet asks of a JSON API.
 * A JSON body is never a page to render or frame, so its policy is `default-src 'none'`. Helmet's
 * other headers concern HTML pages; on the API they would only add bytes to every response.
 * Computed once from helmet's own middleware and set from that list on every response (one loop
 * instead of helmet's chain of sub-middleware per response).
 */
const apiSecurityHeaders = headersSetBy(
  helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
    },
    xFrameOptions: { action: 'deny' },
    crossOriginOpenerPolicy: false,
    crossOriginResourcePolicy: false,
    originAgentCluster: false,
    referrerPolicy: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  }),
);

/** Swagger UI's pages: helmet's whole set for HTML, replacing the API's policy on them. */
const pageSecurityHeaders = helmet({
  // Swagger UI's "Try it out" calls this server at the address it was reached by; on a plain
  // http host (a staging box) the upgrade would send those calls to https and break them.
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
});

/** Parses TRUST_PROXY into the value Express's `trust proxy` setting takes. */
export function trustProxySetting(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}

/**
 * The Express application Nest serves on, for `NestFactory.create`, on a server whose requests and
 * responses have their properties declared up front ({@link ApiExpressAdapter}). Paths are
 * case-sensitive (RFC 3986): `/V1/store/orders` is no alias of `/v1/store/orders`.
 * Express's router reads that setting once, when it is created, and Nest's adapter creates it in
 * its constructor: so the setting is made here, before the adapter exists.
 */
export function createHttpAdapter(): ExpressAdapter {
  const instance = express();
  instance.set('case sensitive routing', true);
  return new ApiExpressAdapter(instance);
}

/** What differs between the API's application and the admin API's (`src/admin/admin-app.ts`). */
export interface AppSetupOptions {
  /** Given each request body read (at most 16 KiB); without it bodies are read and dropped. */
  keepBody?: (req: Request, body: Buffer) => void;
  /** Serves the OpenAPI documents and Swagger UI; the API's own ({@link setupOpenApi}) by default. */
  documents?: (app: NestExpressApplication) => void;
  /** Never sheds load (the admin API); the API sheds by {@link AdmissionMiddleware}. */
  neverShed?: boolean;
}

/**
 * Everything about the HTTP application that is not a module: shared by `main.ts` and the
 * end-to-end tests, so the tests run the application exactly as it is served.
 */
export function configureApp(
  app: NestExpressApplication,
  options: AppSetupOptions = {},
): NestExpressApplication {
  const http = app.get<HttpSettings>(httpSettings.KEY);
  const adapter = app.getHttpAdapter();
  if (adapter instanceof ApiExpressAdapter) adapter.assertInitialised();
  app.useLogger(app.get(Logger));
  answerClientErrors(
    app.getHttpServer(),
    {
      headersMs: http.HTTP_HEADERS_TIMEOUT_MS,
      requestMs: http.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveMs: http.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    app.get(ROOT_LOGGER),
    clientErrorAnswer,
  );
  app.disable('x-powered-by');
  // What every request goes through before routing, as one router layer (inOneLayer): first,
  // when shedding is on, admission control, so that a refusal costs next to nothing; then the
  // observer, so that every response has an id, every request is timed and logged and every
  // response gets the headers, errors included (a body over the limit, a path that cannot be
  // decoded); then, unless a proxy in front does it (COMPRESSION=off), gzip or brotli, streamed
  // lists included; last the body limit, before the router: a body over 16 KiB is refused
  // whatever the path, known or not.
  const securityHeaders = setStaticHeaders(apiSecurityHeaders);
  const admission = options.neverShed ? undefined : app.get(AdmissionMiddleware);
  app.use(
    inOneLayer([
      ...(admission?.enabled
        ? [
            admission.handler((req, res) => {
              requestId(req, res);
              void securityHeaders(req, res, () => undefined);
            }),
          ]
        : []),
      observeRequests(app.get(MetricsService), app.get(REQUEST_LOG)),
      securityHeaders,
      ...(http.COMPRESSION === 'on' ? [compressResponses()] : []),
      limitRequestBodies(options.keepBody),
    ]),
  );
  // Express's default ETag hashes every response body; clients of this API don't use it.
  app.set('etag', false);
  if (http.TRUST_PROXY !== undefined) app.set('trust proxy', trustProxySetting(http.TRUST_PROXY));
  app.enableVersioning(API_VERSIONING);
  // The OpenAPI documents (/openapi.json, /openapi/vN.json) and Swagger UI at /docs: public,
  // mounted after the controllers' routes, so that an API request meets its own route before
  // their layers (the paths never overlap). Under /docs, only the files of Swagger UI's page.
  app.get(RouteNotFoundHandler).afterControllers(() => {
    app.use(SWAGGER_UI_PATH, onlySwaggerUiFiles, pageSecurityHeaders);
    (options.documents ?? setupOpenApi)(app);
  });
  return app;
}
