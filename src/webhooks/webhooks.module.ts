import {
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { AuditModule } from '../audit/audit.module';
import { DatabasePools } from '../database/database-pools';
import { databaseSettings, type DatabaseEnvironment } from '../database/database.settings';
import { EventsModule } from '../events/events.module';
import { type EventsSettings, eventsSettings, runsWorker } from '../events/events.settings';
import { JobQueue } from '../events/job-queue';
import { MetricsService } from '../metrics/metrics.service';
import { WebhookResolver } from './webhook-addresses';
import {
  DELIVERY_POOL_SIZE,
  DELIVERY_SESSION_SETTINGS,
  WebhookDeliverer,
} from './webhook-deliverer';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { WebhookFanOut } from './webhook-fan-out';
import { WebhookMessages } from './webhook-messages';
import { SecretBox } from './webhook-secrets';
import { WebhooksService } from './webhooks.service';
import { type WebhooksSettings, webhooksSettings } from './webhooks.settings';
// The audit actions of endpoints, and what their events carry.
import './webhook.audit';

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
 * (Standard Webhooks), at least once. A consumer of the relayed audit events
 * ({@link WebhookFanOut}) turns each into its deliveries after the change committed; worker
 * processes make the attempts. Owns its settings (`webhooks.settings.ts`), scope
 * (`webhooks.scopes.ts`), error codes (`webhooks.errors.ts`), audit actions (`webhook.audit.ts`),
 * migrations (the endpoints, the deliveries, pg-boss's schema) and the service the admin API's
 * routes call.
 */
@Module({
  imports: [
    ConfigModule.forFeature(webhooksSettings),
    ConfigModule.forFeature(databaseSettings),
    ConfigModule.forFeature(eventsSettings),
    AuditModule,
    EventsModule,
  ],
  providers: [
    WebhookResolver,
    {
      provide: SecretBox,
      inject: [webhooksSettings.KEY],
      useFactory: (settings: WebhooksSettings) => new SecretBox(settings.WEBHOOK_SECRETS_KEY),
    },
    WebhookEndpointsRepository,
    {
      provide: WebhookDeliveriesRepository,
      inject: [DataSource, DatabasePools, databaseSettings.KEY],
      useFactory: (db: DataSource, pools: DatabasePools, database: DatabaseEnvironment) =>
        new WebhookDeliveriesRepository(
          db,
          pools.createStatementPool({
            name: 'webhook delivery',
            size: DELIVERY_POOL_SIZE,
            statementTimeoutMs: database.DATABASE_STATEMENT_TIMEOUT_MS,
            sessionSettings: DELIVERY_SESSION_SETTINGS,
          }),
        ),
    },
    WebhooksService,
    {
      provide: WebhookMessages,
      inject: [DataSource],
      useFactory: (db: DataSource) => new WebhookMessages(db),
    },
    WebhookFanOut,
    {
      provide: WebhookDeliverer,
      inject: [
        WebhookEndpointsRepository,
        WebhookDeliveriesRepository,
        webhooksSettings.KEY,
        WebhookResolver,
        SecretBox,
        WebhookMessages,
        MetricsService,
        PinoLogger,
        JobQueue,
        eventsSettings.KEY,
      ],
      useFactory: (
        endpoints: WebhookEndpointsRepository,
        deliveries: WebhookDeliveriesRepository,
        settings: WebhooksSettings,
        resolver: WebhookResolver,
        secrets: SecretBox,
        messages: WebhookMessages,
        metrics: MetricsService,
        logger: PinoLogger,
        queue: JobQueue,
        events: EventsSettings,
      ) => {
        logger.setContext('Webhooks');
        return new WebhookDeliverer({
          endpoints,
          deliveries,
          settings,
          resolver,
          secrets,
          messages,
          metrics,
          logger,
          queue,
          delivers: runsWorker(events),
        });
      },
    },
    WebhookDeliveryLifecycle,
  ],
  exports: [WebhooksService, WebhookResolver, WebhookDeliverer],
})
export class WebhooksModule {}
