import {
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { ApiKeyStore } from '../auth/api-key.store';
import { APP_OPTIONS, type AppOptions } from '../database/app-options';
import { DatabasePools } from '../database/database-pools';
import { databaseSettings, type DatabaseEnvironment } from '../database/database.settings';
import { MetricsService } from '../metrics/metrics.service';
import { WebhookResolver } from './webhook-addresses';
import {
  DELIVERY_POOL_SIZE,
  DELIVERY_SESSION_SETTINGS,
  WebhookDeliverer,
} from './webhook-deliverer';
import { WebhookMessages } from './webhook-messages';
import { SecretBox } from './webhook-secrets';
import { WebhooksService } from './webhooks.service';
import { type WebhooksSettings, webhooksSettings } from './webhooks.settings';

/** Starts this instance's attempts after the application is up, stops them before it closes. */
@Injectable()
class WebhookDeliveryLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly deliverer: WebhookDeliverer,
    private readonly secrets: SecretBox,
    @InjectPinoLogger('Webhooks') private readonly logger: PinoLogger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.secrets.encrypts) {
      this.logger.warn(
        'WEBHOOK_SECRETS_KEY is not set: webhook signing secrets are stored unencrypted in the database',
      );
    }
    await this.deliverer.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.deliverer.stop();
  }
}

/**
 * Events and webhooks: every audit event reaches the endpoints subscribed to its action, signed
 * (Standard Webhooks), at least once. Owns its settings (`webhooks.settings.ts`), scope
 * (`webhooks.scopes.ts`), error codes (`webhooks.errors.ts`), migrations (the endpoints, the
 * deliveries, pg-boss's queue and the trigger on the audit trail that feeds them) and the
 * service the admin API's routes call.
 */
@Module({
  imports: [ConfigModule.forFeature(webhooksSettings), ConfigModule.forFeature(databaseSettings)],
  providers: [
    WebhookResolver,
    {
      provide: SecretBox,
      inject: [webhooksSettings.KEY],
      useFactory: (settings: WebhooksSettings) => new SecretBox(settings.WEBHOOK_SECRETS_KEY),
    },
    {
      provide: WebhooksService,
      inject: [DataSource, webhooksSettings.KEY, WebhookResolver, SecretBox],
      useFactory: (
        db: DataSource,
        settings: WebhooksSettings,
        resolver: WebhookResolver,
        secrets: SecretBox,
      ) => new WebhooksService(db, settings, resolver, secrets),
    },
    {
      provide: WebhookMessages,
      inject: [DataSource, ApiKeyStore],
      useFactory: (db: DataSource, keys: ApiKeyStore) => new WebhookMessages(db, keys),
    },
    {
      provide: WebhookDeliverer,
      inject: [
        DataSource,
        webhooksSettings.KEY,
        WebhookResolver,
        SecretBox,
        WebhookMessages,
        MetricsService,
        APP_OPTIONS,
        PinoLogger,
        DatabasePools,
        databaseSettings.KEY,
      ],
      useFactory: (
        db: DataSource,
        settings: WebhooksSettings,
        resolver: WebhookResolver,
        secrets: SecretBox,
        messages: WebhookMessages,
        metrics: MetricsService,
        options: AppOptions,
        logger: PinoLogger,
        pools: DatabasePools,
        database: DatabaseEnvironment,
      ) => {
        logger.setContext('Webhooks');
        return new WebhookDeliverer({
          db,
          pool: pools.createPool({
            name: 'webhook delivery',
            size: DELIVERY_POOL_SIZE,
            statementTimeoutMs: database.DATABASE_STATEMENT_TIMEOUT_MS,
            sessionSettings: DELIVERY_SESSION_SETTINGS,
          }),
          settings,
          resolver,
          secrets,
          messages,
          metrics,
          logger,
          databaseUrl: options.databaseUrl,
        });
      },
    },
    WebhookDeliveryLifecycle,
  ],
  exports: [WebhooksService, WebhookResolver, WebhookDeliverer],
})
export class WebhooksModule {}
