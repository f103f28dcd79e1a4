import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { APP_OPTIONS, AppOptions } from '../database/app-options';
import { ApiKeysRepository } from './api-keys.repository';
import { PLANS } from '../plans/plans';

/** Enterprise limits of the demo key: generous, to show a plan that is set per key. */
const DEMO_ENTERPRISE_LIMITS = { perMinute: 5_000, perDay: 1_000_000 };

/**
 * Embedded default only: on first start (no keys yet), one demo key per plan, printed once in the
 * log so the README's curl session works. Never with DATABASE_URL.
 */
@Injectable()
export class DemoKeysSeeder implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_OPTIONS) private readonly options: AppOptions,
    private readonly store: ApiKeysRepository,
    @InjectPinoLogger(DemoKeysSeeder.name) private readonly logger: PinoLogger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.seedDemoData || (await this.store.list()).length > 0) return;
    for (const plan of PLANS) {
      const issued = await this.store.issue({
        plan,
        name: `demo ${plan}`,
        limits: plan === 'enterprise' ? DEMO_ENTERPRISE_LIMITS : undefined,
      });
      this.logger.info(
        { keyId: issued.id, plan },
        `demo API key (${plan}, shown once): ${issued.key}`,
      );
    }
  }
}
