import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { configureApp, createHttpAdapter } from './app.setup';
import { AppConfig } from './config/app-config';
import {
  EnvironmentVariables,
  InvalidEnvironmentError,
  validateEnvironment,
} from './config/environment';
import { EmbeddedDatabase } from './database/embedded-database';
import { ShutdownState } from './health/shutdown-state';

function loadEnvironment(): EnvironmentVariables {
  try {
    return validateEnvironment(process.env);
  } catch (error) {
    if (error instanceof InvalidEnvironmentError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function bootstrap(): Promise<void> {
  const env = loadEnvironment();

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = env.DATABASE_URL;
  if (databaseUrl === undefined) {
    process.stdout.write(
      `DATABASE_URL is not set: starting the embedded PostgreSQL in ${env.EMBEDDED_DATABASE_DIR}\n`,
    );
    embedded = await EmbeddedDatabase.start({
      dir: env.EMBEDDED_DATABASE_DIR,
      port: env.EMBEDDED_DATABASE_PORT,
    });
    databaseUrl = embedded.url;
  }

  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot({
      databaseUrl,
      runMigrations: embedded !== undefined,
      seedDemoData: embedded !== undefined,
    }),
    createHttpAdapter(),
    { bufferLogs: true, bodyParser: false },
  );
  configureApp(app);
  const logger = app.get(Logger);

  const { drainDelayMs, timeoutMs } = app.get(AppConfig).shutdown;
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    // Whatever hangs (a client that stops reading, a stuck query), the process still ends.
    setTimeout(() => {
      logger.error(`Shutdown did not finish within ${timeoutMs} ms: exiting`, 'Shutdown');
      process.exit(1);
    }, timeoutMs);
    logger.log(`${signal}: shutting down, readiness is now 503`, 'Shutdown');
    app.get(ShutdownState).begin();
    if (drainDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, drainDelayMs));
    logger.log('Closing the listener, draining in-flight requests', 'Shutdown');
    try {
      // Stops accepting, waits for in-flight requests, then closes the pool and Redis.
      await app.close();
      await embedded?.stop();
    } catch (error) {
      logger.error(error, 'Shutdown');
      process.exit(1);
    }
    logger.log('Shutdown complete', 'Shutdown');
    process.exit(0);
  };
  process.once('SIGTERM', (s) => void shutdown(s));
  process.once('SIGINT', (s) => void shutdown(s));

  await app.listen(env.PORT);
  logger.log(`Store Orders Service listening on ${await app.getUrl()}/v1`, 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(
    `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
