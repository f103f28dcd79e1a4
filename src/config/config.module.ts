import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule as NestConfigModule } from '@nestjs/config';
import { validateEnvironment } from './environment';

/**
 * Reads and validates the environment when the application is assembled (not when this file is
 * imported), so a process or a test that sets variables first gets exactly what it set.
 */
@Module({})
export class ConfigModule {
  static forRoot(): DynamicModule {
    return {
      module: ConfigModule,
      global: true,
      imports: [
        NestConfigModule.forRoot({
          ignoreEnvFile: true,
          skipProcessEnv: true,
          validate: validateEnvironment,
        }),
      ],
    };
  }
}
