import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino, { type Logger } from 'pino';
import { AppConfig } from '../config/app-config';

/** The application's pino logger: the request log writes to it, and nestjs-pino derives from it. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

function createRootLogger(config: AppConfig): Logger {
  return pino({
    level: config.logLevel,
    transport:
      process.env.NODE_ENV === 'development'
        ? { target: 'pino-pretty', options: { singleLine: true } }
        : undefined,
  });
}

@Module({
  providers: [{ provide: ROOT_LOGGER, inject: [AppConfig], useFactory: createRootLogger }],
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
