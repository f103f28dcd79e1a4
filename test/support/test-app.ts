import { type DynamicModule, Module, type ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { Pool } from 'pg';
import type { AppOptions } from '../../src/database/app-options';
import { AppModule } from '../../src/app.module';
import { ApiKeysRepository } from '../../src/auth/api-keys.repository';
import { configureApp, createHttpAdapter } from '../../src/app.setup';
import { ENV, TEMPLATE_DATABASE, withClient } from '../setup/clusters';
import { OpenApiContract } from './contract';

export interface TestApp {
  app: NestExpressApplication;
  http: Server;
  /** Direct access to this app's database, to arrange rows as other parts of the store would. */
  db: Pool;
  databaseUrl: string;
  /** An enterprise key with limits no suite reaches; `api(t)` sends it unless told otherwise. */
  key: string;
  keys: ApiKeysRepository;
  /** The OpenAPI document this app serves: `api(t)` holds every response to it. */
  contract: OpenApiContract;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment variables for this app (validated like the real ones). */
  env?: Record<string, string>;
  /** Use this database instead of a fresh copy of the migrated template. */
  databaseUrl?: string;
  /** As `main.ts` decides them, e.g. `seedDemoData` for the demo orders of a first start. */
  appOptions?: Omit<AppOptions, 'databaseUrl'>;
  /** More modules, mounted beside the real ones as a team extending the service would. */
  imports?: ModuleMetadata['imports'];
}

@Module({})
class ExtendedAppModule {}

/** The application's root module, with any extra modules mounted beside it. */
function rootModule(databaseUrl: string, { imports, appOptions }: TestAppOptions): DynamicModule {
  const app = AppModule.forRoot({ ...appOptions, databaseUrl });
  return imports ? { module: ExtendedAppModule, imports: [app, ...imports] } : app;
}

/** A new database, copied from the migrated template on the run's one PostgreSQL server. */
export async function createTestDatabase(): Promise<string> {
  const templateUrl = process.env[ENV.url];
  if (!templateUrl) throw new Error('The e2e global setup did not run (no test database URL)');
  const name = `test_${randomBytes(6).toString('hex')}`;
  await withClient(templateUrl.replace(/[^/]+$/, 'postgres'), (c) =>
    c.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`),
  );
  return templateUrl.replace(/[^/]+$/, name);
}

/** Serves the test app on a free loopback port, for clients that need a real URL. */
export async function listen(t: TestApp): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  return t.app.getUrl();
}

/** The real AppModule (and any `imports`), configured as `main.ts` does, on its own database. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const env = { LOG_LEVEL: 'silent', ...options.env };
  Object.assign(process.env, env);
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase());
  const forgetEnv = (): void => {
    for (const name of Object.keys(env)) Reflect.deleteProperty(process.env, name);
  };
  let app: NestExpressApplication;
  try {
    app = await NestFactory.create<NestExpressApplication>(
      rootModule(databaseUrl, options),
      createHttpAdapter(),
      // A module that cannot be created (a bad setting) fails the test, not the whole process.
      { bodyParser: false, logger: false, abortOnError: false },
    );
  } catch (error) {
    forgetEnv();
    throw error;
  }
  const db = new Pool({ connectionString: databaseUrl, max: 4 });
  const close = async (): Promise<void> => {
    forgetEnv();
    if (!db.ended) await db.end();
    await app.close();
  };
  try {
    configureApp(app);
    await app.init();
    const keys = app.get(ApiKeysRepository);
    const { key } = await keys.issue({
      plan: 'enterprise',
      name: 'e2e',
      limits: { perMinute: 1_000_000, perDay: 1_000_000_000 },
    });
    const http = app.getHttpServer();
    const contract = await OpenApiContract.load(http);
    return { app, http, db, databaseUrl, key, keys, contract, close };
  } catch (error) {
    // A suite whose setup fails must not leave a server and a pool behind: Jest would never exit.
    await close().catch(() => undefined);
    throw error;
  }
}
