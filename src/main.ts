// First: tracing must be started before Nest, Express, pg and ioredis are loaded.
import { stopTracing } from './tracing/tracing';
import 'reflect-metadata';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import type { Logger as PinoLogger } from 'pino';
import { AppModule } from './app.module';
import { createAdminApp } from './admin/admin-app';
import { adminListenerOf } from './admin/admin.settings';
import { configureApp, createHttpAdapter } from './app.setup';
import { InvalidEnvironmentError, validateEnvironment } from './config/environment';
import { applyMigrations } from './database/apply-migrations';
import { databaseSettingsOf } from './database/data-source-options';
import { databaseSettings } from './database/database.settings';
import { EmbeddedDatabase, embeddedDatabaseInstalled } from './database/embedded/embedded-database';
import { ShutdownState } from './health/shutdown-state';
import { shutdownSettings } from './health/shutdown.settings';
import { createRootLogger, flushLogs, ROOT_LOGGER } from './logging/logging.module';
import { loggingSettings } from './logging/logging.settings';
import { httpSettings } from './common/http/http.settings';

/** Every module's settings validated at once, before anything starts; a bad one stops here. */
function loadEnvironment(): void {
  try {
    validateEnvironment(process.env);
  } catch (error) {
    if (error instanceof InvalidEnvironmentError) {
      createRootLogger('info').fatal(
        { context: 'Bootstrap', problems: error.problems },
        `Invalid configuration: ${error.problems.join('; ')}`,
      );
      process.exit(1);
    }
    throw error;
  }
}

async function bootstrap(): Promise<void> {
  loadEnvironment();
  // Read before Nest starts, as the modules read them (the same typed values).
  const env = databaseSettings.read(process.env);
  const http = httpSettings.read(process.env);
  // What is said before the application and its logger exist, in the same JSON format.
  const startupLog = createRootLogger(loggingSettings.read(process.env).LOG_LEVEL).child({
    context: 'Bootstrap',
  });

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = env.DATABASE_URL;
  if (databaseUrl === undefined) {
    if (!embeddedDatabaseInstalled()) {
      startupLog.fatal(
        'DATABASE_URL is not set, and this production install has no embedded PostgreSQL (a development dependency): set DATABASE_URL to the URL of a PostgreSQL database',
      );
      process.exit(1);
    }
    startupLog.info(
      { dir: env.EMBEDDED_DATABASE_DIR },
      `DATABASE_URL is not set: starting the embedded PostgreSQL in ${env.EMBEDDED_DATABASE_DIR}`,
    );
    embedded = await EmbeddedDatabase.start({
      dir: env.EMBEDDED_DATABASE_DIR,
      port: env.EMBEDDED_DATABASE_PORT,
    });
    // As production does it: the schema's owner migrates, the service connects as the runtime
    // role, which can neither change the schema nor alter the audit trail.
    await applyMigrations(embedded.migrateUrl, databaseSettingsOf(env, { statementTimeoutMs: 0 }));
    databaseUrl = embedded.url;
  }

  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot({
      databaseUrl,
      seedDemoData: embedded !== undefined,
    }),
    createHttpAdapter(),
    { bufferLogs: true, bodyParser: false },
  );
  configureApp(app);
  const logger = app.get(Logger);
  // The log is buffered: every way out of the process writes what it holds first.
  const rootLogger = app.get<PinoLogger>(ROOT_LOGGER);
  const exit = (code: number): void => {
    void flushLogs(rootLogger).finally(() => process.exit(code));
  };
  process.once('uncaughtException', (error) => {
    rootLogger.fatal({ err: error }, 'Uncaught exception: exiting');
    exit(1);
  });

  if (http.TRUST_PROXY === 'true') {
    logger.warn(
      "TRUST_PROXY=true trusts every X-Forwarded-For hop: any client chooses the address its anonymous limits and bans count against. Set the hop count (1 behind one proxy) or the proxies' addresses",
      'Bootstrap',
    );
  }
  // The admin API: a second application on its own listener, only when asked for.
  const adminListener = adminListenerOf(process.env);
  const admin = adminListener && {
    ...adminListener,
    app: await createAdminApp(app, { bufferLogs: true }),
  };
  const { SHUTDOWN_DRAIN_DELAY_MS: drainDelayMs, SHUTDOWN_TIMEOUT_MS: timeoutMs } =
    shutdownSettings.read(process.env);
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    // Whatever hangs (a client that stops reading, a stuck query), the process still ends.
    setTimeout(() => {
      logger.error(`Shutdown did not finish within ${timeoutMs} ms: exiting`, 'Shutdown');
      exit(1);
    }, timeoutMs);
    logger.log(`${signal}: shutting down, readiness is now 503`, 'Shutdown');
    app.get(ShutdownState).begin();
    // A proxy's keep-alive connections would carry new requests until the deadline: from now on
    // every response closes its connection, so the proxy opens its next one to another instance.
    app
      .getHttpServer()
      .prependListener('request', (_req: unknown, res: ServerResponse) =>
        res.setHeader('Connection', 'close'),
      );
    if (drainDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, drainDelayMs));
    logger.log('Closing the listener, draining in-flight requests', 'Shutdown');
    try {
      // Stops accepting, waits for in-flight requests, then closes the pool and Redis. The admin
      // application first: it counts in the API's rate-limit storage (and its Redis client).
      await admin?.app.close();
      await app.close();
      await embedded?.stop();
      await stopTracing();
    } catch (error) {
      logger.error(error, 'Shutdown');
      exit(1);
      return;
    }
    logger.log('Shutdown complete', 'Shutdown');
    exit(0);
  };
  process.once('SIGTERM', (s) => void shutdown(s));
  process.once('SIGINT', (s) => void shutdown(s));

  if (http.HOST === undefined) await app.listen(http.PORT);
  else await app.listen(http.PORT, http.HOST);
  // The address really bound (`::` or `0.0.0.0`: every interface), not a guess at a reachable one.
  const { address, port } = app.getHttpServer().address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  logger.log(
    { address, port, node: process.version },
    `Store Orders Service listening on http://${host}:${port}/v1`,
    'Bootstrap',
  );
  if (admin) {
    await admin.app.listen(admin.port, admin.host);
    const bound = admin.app.getHttpServer().address() as AddressInfo;
    const adminHost = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
    logger.log(
      { address: bound.address, port: bound.port },
      `Admin API listening on http://${adminHost}:${bound.port}/admin/v1`,
      'Bootstrap',
    );
  }
}

bootstrap().catch((error: unknown) => {
  createRootLogger('info').fatal({ context: 'Bootstrap', err: error }, 'Failed to start');
  process.exit(1);
});
