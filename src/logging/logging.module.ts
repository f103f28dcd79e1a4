import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { LoggerModule } from 'nestjs-pino';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { loggingSettings, type LoggingSettings, type LogLevel } from './logging.settings';
import { tracingConfigured } from '../tracing/tracing';
import { batchedDestination } from '../platform/batched-destination';
import { redactDeep } from './redact';
import { requestLogWriter, type RequestLogWriter } from '../platform/request-log';

/** The application's pino logger: the request log writes to it, and nestjs-pino derives from it. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');
/** The {@link RequestLogWriter} of the request log, on the application's logger. */
export const REQUEST_LOG = Symbol('REQUEST_LOG');

/**
 * Options of every logger of the application (the request log's own line honours only these:
 * src/platform/request-log.spec.ts fails for one that changes a request line): its level, and
 * errors serialized as pino does, then with every key-shaped string in them redacted. An error
 * may quote what a client sent (a database error its query's parameters, a message its input),
 * and a key never appears in a log line. Every other string a client controls is
 * redacted (or refused) before it is logged: the url (`redactUrl`), the request id
 * (`isSafeRequestId`).
 */
export function loggerOptions(level: LogLevel): LoggerOptions {
  return {
    level,
    serializers: { err: (error: unknown) => redactDeep(pino.stdSerializers.err(error as Error)) },
  };
}

/**
 * The one log format: JSON lines on stdout, pretty only in development. What the start says
 * before the application (and its logger) exists (`main.ts`, `main.environment.ts`) uses it
 * too, so every line parses the same way.
 */
export function createRootLogger(level: LogLevel): Logger {
  if (process.env.NODE_ENV === 'development') {
    return pino({
      ...loggerOptions(level),
      transport: { target: 'pino-pretty', options: { singleLine: true } },
    });
  }
  return pino(loggerOptions(level));
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

/** The application's logger, and the request log's writer on the same destination. */
interface ApplicationLog {
  logger: Logger;
  requestLog: RequestLogWriter;
}

/**
 * The application's logger, which writes a line per request: in the one format, buffered. Lines
 * are gathered in batches of 16 KiB (or 200 ms) and written asynchronously by pino's sonic-boom
 * destination, so a request's line costs its encoding into a batch buffer, not a write(2) of its
 * own ({@link batchedDestination}). {@link flushLogs} writes them all before the process exits
 * (shutdown, fatal error); any other exit writes the batch synchronously, as a last resort.
 *
 * The request log's writer builds its lines itself on that destination, unless a pino plugin has
 * to see each line: OpenTelemetry's pino instrumentation, when tracing is on ({@link requestLogWriter}).
 */
function createApplicationLog(level: LogLevel): ApplicationLog {
  if (process.env.NODE_ENV === 'development') {
    const logger = createRootLogger(level);
    return { logger, requestLog: requestLogWriter(logger) };
  }
  const destination = batchedDestination();
  const logger = pino(loggerOptions(level), destination);
  const ownLines = !tracingConfigured(process.env);
  return { logger, requestLog: requestLogWriter(logger, ownLines ? destination : undefined) };
}

const APPLICATION_LOG = Symbol('APPLICATION_LOG');

@Module({
  imports: [ConfigModule.forFeature(loggingSettings)],
  providers: [
    {
      provide: APPLICATION_LOG,
      inject: [loggingSettings.KEY],
      useFactory: (settings: LoggingSettings) => createApplicationLog(settings.LOG_LEVEL),
    },
    {
      provide: ROOT_LOGGER,
      inject: [APPLICATION_LOG],
      useFactory: (log: ApplicationLog) => log.logger,
    },
    {
      provide: REQUEST_LOG,
      inject: [APPLICATION_LOG],
      useFactory: (log: ApplicationLog) => log.requestLog,
    },
  ],
  exports: [ROOT_LOGGER, REQUEST_LOG],
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
