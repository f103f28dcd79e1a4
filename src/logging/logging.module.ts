import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino, { type Logger } from 'pino';
import { AppConfig } from '../config/app-config';
import type { LogLevel } from '../config/environment';

/** The application's pino logger: the request log writes to it, and nestjs-pino derives from it. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * The one log format: JSON lines on stdout. Also used by `main.ts` for what it says before the
 * application (and its logger) exists, so every startup line parses the same way.
 */
export function createRootLogger(level: LogLevel): Logger {
  return pino({
    level,
    transport:
      process.env.NODE_ENV === 'development'
        ? { target: 'pino-pretty', options: { singleLine: true } }
        : undefined,
  });
}

@Module({
  providers: [
    {
      provide: ROOT_LOGGER,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => createRootLogger(config.logLevel),
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
