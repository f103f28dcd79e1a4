// First: the compile cache, for every module after it; then tracing, which must be started
// before Nest, Express, pg and ioredis are loaded.
import './main.compile-cache';
import './tracing/tracing';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { createAdminListener } from './admin/admin-listener';
import { configureApp, createHttpAdapter } from './app.setup';
import { boundAddress } from './common/http/bound-address';
import type { HttpSettings } from './common/http/http.settings';
import { eventsSettings, runsApi } from './events/events.settings';
import { createRootLogger } from './logging/logging.module';
import { loadEnvironment } from './main.environment';
import { exitAfterTheLog, shutDownOnSignals } from './main.shutdown';

/**
 * The service's start: the environment (settings, the database), the API's application, the
 * admin API's beside it, the shutdown at SIGTERM, then the listeners. A process without the `api`
 * role (`SERVICE_ROLES=worker`) listens on neither: it relays, consumes and delivers.
 */
async function bootstrap(): Promise<void> {
  const { http, databaseUrl, embedded } = await loadEnvironment();
  const api = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot({ databaseUrl, seedDemoData: embedded !== undefined }),
    createHttpAdapter(),
    { bufferLogs: true, bodyParser: false },
  );
  configureApp(api);
  const logger = api.get(Logger);
  const exit = exitAfterTheLog(api);
  warnOfTrustProxy(http, logger);
  const serves = runsApi(eventsSettings.read(process.env));
  const admin = serves ? await createAdminListener(api) : undefined;
  shutDownOnSignals({ api, admin, embedded }, exit);
  if (!serves) {
    await api.init();
    logger.log('Store Orders Service started as a worker only (SERVICE_ROLES)', 'Bootstrap');
    return;
  }
  await listen(api, http, logger);
  await admin?.listen(logger);
}

function warnOfTrustProxy(http: HttpSettings, logger: Logger): void {
  if (http.TRUST_PROXY !== 'true') return;
  logger.warn(
    "TRUST_PROXY=true trusts every X-Forwarded-For hop: any client chooses the address its anonymous limits and bans count against. Set the hop count (1 behind one proxy) or the proxies' addresses",
    'Bootstrap',
  );
}

async function listen(
  api: NestExpressApplication,
  http: HttpSettings,
  logger: Logger,
): Promise<void> {
  if (http.HOST === undefined) await api.listen(http.PORT);
  else await api.listen(http.PORT, http.HOST);
  const { address, port, host } = boundAddress(api.getHttpServer());
  logger.log(
    { address, port, node: process.version },
    `Store Orders Service listening on http://${host}:${port}/v1`,
    'Bootstrap',
  );
}

bootstrap().catch((error: unknown) => {
  createRootLogger('info').fatal({ context: 'Bootstrap', err: error }, 'Failed to start');
  process.exit(1);
});
