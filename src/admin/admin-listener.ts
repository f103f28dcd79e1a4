import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { boundAddress } from '../common/http/bound-address';
import { createAdminApp } from './admin-app';
import { adminListenerOf } from './admin.settings';

/** The admin API's application, and its listener on ADMIN_HOST:ADMIN_PORT once asked to listen. */
export interface AdminListener {
  readonly app: NestExpressApplication;
  /** Listens, and logs the address it bound. */
  listen(logger: LoggerService): Promise<void>;
}

/**
 * The admin API, only when ADMIN_PORT asks for it: a second application beside the API's `api`,
 * created before either listens, so that a shutdown from then on closes it (before `api`).
 */
export async function createAdminListener(
  api: INestApplicationContext,
): Promise<AdminListener | undefined> {
  const listener = adminListenerOf(process.env);
  if (listener === undefined) return undefined;
  const app = await createAdminApp(api, { bufferLogs: true });
  return {
    app,
    async listen(logger) {
      await app.listen(listener.port, listener.host);
      const { address, port, host } = boundAddress(app.getHttpServer());
      logger.log(
        { address, port },
        `Admin API listening on http://${host}:${port}/admin/v1`,
        'Bootstrap',
      );
    },
  };
}
