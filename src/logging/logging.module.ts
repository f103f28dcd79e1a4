import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino, { type Logger } from 'pino';
import { AppConfig } from '../config/app-config';
import type { LogLevel } from '../config/environment';
import { batchedDestination } from './batched-destination';

/** The application's pino logger: the request log writes to it, and nestjs-pino derives from it. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * The one log format: JSON lines on stdout. Also used by `main.ts` for what it says before the
 * application (and its logger) exists, so every startup line parses the same way.
 *
 * `buffered` (the application's logger, which writes a line per request): lines are gathered in
 * batches of 16 KiB (or 200 ms) and written asynchronously by pino's sonic-boom destination, so
 * a request's line costs an entry in a list, not a write(2) or a re-measured buffer of its own
 * ({@link batchedDestination}). {@link flushLogs} writes them all before the process exits
 * (shutdown, fatal error); any other exit writes the batch synchronously, as a last resort.
 */
export function createRootLogger(level: LogLevel, buffered = false): Logger {
  if (process.env.NODE_ENV === 'development') {
    return pino({ level, transport: { target: 'pino-pretty', options: { singleLine: true } } });
  }
  if (!buffered) return pino({ level });
  return pino({ level }, batchedDestination());
}

/**
 * Resolves once every line logged so far has been written (or after `timeoutMs`, so that a
 * stdout nobody reads cannot hold the exit). Call before `process.exit()`.
 */
export function flushLogs(logger: Logger, timeoutMs = 2000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    logger.flush(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

@Module({
  providers: [
    {
      provide: ROOT_LOGGER,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => createRootLogger(config.logLevel, true),
    },
  ],
  exports: [ROOT_LOGGER],
})
class RootLoggerModule {}

/**
 * Structured JSON logs (pino) on stdout, pretty only in development: Nest's own logs and every
 * `@InjectPinoLogger()` go through nestjs-pino, on the one root logger. Never the Authorization
 * header. The one line per request is written by `observeRequests` (see there why not pino-http):
 * nestjs-pino's HTTP middleware is mounted on no route.
 */
@Module({})
export class LoggingModule {
  /**
   * Called when the application is assembled: nestjs-pino creates the `@InjectPinoLogger()`
   * providers of every class decorated by then.
   */
  static forRoot(): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        RootLoggerModule,
        LoggerModule.forRootAsync({
          imports: [RootLoggerModule],
          inject: [ROOT_LOGGER],
          useFactory: (logger: Logger) => ({ pinoHttp: { logger }, forRoutes: [] }),
        }),
      ],
      exports: [RootLoggerModule],
    };
  }
}
