import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino, { type Logger } from 'pino';
import { AppConfig } from '../config/app-config';
import type { LogLevel } from '../config/environment';

/** The application's pino logger: the request log writes to it, and nestjs-pino derives from it. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/** Log text held before one write(2): under load, about a dozen request lines per write. */
export const LOG_BUFFER_BYTES = 4096;
/** Longest a line waits in the buffer when traffic is too low to fill it. */
export const LOG_FLUSH_INTERVAL_MS = 200;

/**
 * The one log format: JSON lines on stdout. Also used by `main.ts` for what it says before the
 * application (and its logger) exists, so every startup line parses the same way.
 *
 * `buffered` (the application's logger, which writes a line per request): through sonic-boom,
 * buffered and written asynchronously (`sync: false`, `minLength`), so a request's line costs an
 * append to a string, not a write(2) of its own. The buffer is written every
 * {@link LOG_FLUSH_INTERVAL_MS}, by {@link flushLogs} before the process exits (shutdown, fatal
 * error), and as a last resort synchronously by pino's own exit hook.
 */
export function createRootLogger(level: LogLevel, buffered = false): Logger {
  if (process.env.NODE_ENV === 'development') {
    return pino({ level, transport: { target: 'pino-pretty', options: { singleLine: true } } });
  }
  if (!buffered) return pino({ level });
  const destination = pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES });
  setInterval(() => {
    try {
      destination.flush();
    } catch {
      // Destroyed (stdout closed): nothing can be written any more, and logging must not throw.
    }
  }, LOG_FLUSH_INTERVAL_MS).unref();
  return pino({ level }, destination);
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
