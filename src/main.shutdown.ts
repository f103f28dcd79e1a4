import type { ServerResponse } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import type { Logger as PinoLogger } from 'pino';
import type { AdminListener } from './admin/admin-listener';
import type { EmbeddedDatabase } from './database/embedded/embedded-database';
import { ShutdownState } from './health/shutdown-state';
import { type ShutdownSettings, shutdownSettings } from './health/shutdown.settings';
import { flushLogs, ROOT_LOGGER } from './logging/logging.module';
import { stopTracing } from './tracing/tracing';

/** What a shutdown closes, in this order: the admin application, the API's, the database. */
export interface Closing {
  api: NestExpressApplication;
  admin?: AdminListener;
  embedded?: EmbeddedDatabase;
}

/**
 * How the process exits: after writing the log it buffers. An uncaught exception exits this way
 * too, with status 1, from now on.
 */
export function exitAfterTheLog(api: NestExpressApplication): (code: number) => void {
  const rootLogger = api.get<PinoLogger>(ROOT_LOGGER);
  const exit = (code: number): void => {
    void flushLogs(rootLogger).finally(() => process.exit(code));
  };
  process.once('uncaughtException', (error) => {
    rootLogger.fatal({ err: error }, 'Uncaught exception: exiting');
    exit(1);
  });
  return exit;
}

/**
 * At SIGTERM or SIGINT: readiness answers 503 at once; after SHUTDOWN_DRAIN_DELAY_MS the
 * listeners stop accepting and drain their in-flight requests; then the pools, the embedded
 * database and tracing close, and the process exits; 1 if it all takes longer than
 * SHUTDOWN_TIMEOUT_MS or fails.
 */
export function shutDownOnSignals(closing: Closing, exit: (code: number) => void): void {
  const settings = shutdownSettings.read(process.env);
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    void shutDown(signal, closing, settings, exit);
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

async function shutDown(
  signal: NodeJS.Signals,
  { api, admin, embedded }: Closing,
  { SHUTDOWN_DRAIN_DELAY_MS: drainDelayMs, SHUTDOWN_TIMEOUT_MS: timeoutMs }: ShutdownSettings,
  exit: (code: number) => void,
): Promise<void> {
  const logger = api.get(Logger);
  // Whatever hangs (a client that stops reading, a stuck query), the process still ends.
  setTimeout(() => {
    logger.error(`Shutdown did not finish within ${timeoutMs} ms: exiting`, 'Shutdown');
    exit(1);
  }, timeoutMs);
  logger.log(`${signal}: shutting down, readiness is now 503`, 'Shutdown');
  api.get(ShutdownState).begin();
  // A proxy's keep-alive connections would carry new requests until the deadline: from now on
  // every response closes its connection, so the proxy opens its next one to another instance.
  api
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
    await api.close();
    await embedded?.stop();
    await stopTracing();
  } catch (error) {
    logger.error(error, 'Shutdown');
    exit(1);
    return;
  }
  logger.log('Shutdown complete', 'Shutdown');
  exit(0);
}
