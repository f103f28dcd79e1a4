/**
 * One more instance of the service on a test's database, in a process of its own (so that a test
 * can kill it with SIGKILL): the real application, as `createTestApp` assembles it, with the
 * environment it is given. Prints `ready` once its modules (and so its webhook worker) started.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from '../../src/app.module';
import { configureApp, createHttpAdapter } from '../../src/app.setup';

async function main(): Promise<void> {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  if (databaseUrl === undefined) throw new Error('TEST_DATABASE_URL is not set');
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot({ databaseUrl }),
    createHttpAdapter(),
    { bodyParser: false, logger: false },
  );
  configureApp(app);
  await app.init();
  process.stdout.write('ready\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
