import {
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { PinoLogger } from 'nestjs-pino';
import { APP_OPTIONS, type AppOptions } from '../database/app-options';
import { DatabasePools } from '../database/database-pools';
import { MetricsService } from '../metrics/metrics.service';
import {
  type Consumer,
  consumerOf,
  type ConsumesEvents,
  EventConsumer,
  type EventConsumerOptions,
} from './event-consumer';
import { EventRelay, RELAY_STATEMENT_TIMEOUT_MS } from './event-relay';
import { EventRelayRepository } from './event-relay.repository';
import { EventWorkers } from './event-workers';
import { type EventsSettings, eventsSettings, runsWorker } from './events.settings';
import { JobQueue } from './job-queue';

/** How long the process waits for the jobs under way at shutdown, at most, in ms. */
const STOP_TIMEOUT_MS = 30_000;

/**
 * Starts, in a worker process, the consumers' workers and then the relay; stops them at shutdown
 * before pg-boss itself.
 */
@Injectable()
class EventsLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly queue: JobQueue,
    private readonly relay: EventRelay,
    private readonly workers: EventWorkers,
    @Inject(eventsSettings.KEY) private readonly settings: EventsSettings,
  ) {}

  /** Every provider of the application declared an `@EventConsumer`. */
  private consumers(): Consumer[] {
    const consumers = this.discovery
      .getProviders({ metadataKey: EventConsumer.KEY })
      .map((wrapper) =>
        consumerOf(
          this.discovery.getMetadataByDecorator(EventConsumer, wrapper) as EventConsumerOptions,
          wrapper.instance as ConsumesEvents,
        ),
      );
    const names = consumers.map((consumer) => consumer.options.name);
    const twice = names.find((name, i) => names.indexOf(name) !== i);
    if (twice !== undefined) throw new Error(`Two event consumers are named ${twice}`);
    return consumers;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!runsWorker(this.settings)) return;
    const consumers = this.consumers();
    const boss = await this.queue.started();
    await this.workers.start(boss, consumers);
    this.relay.start(boss, consumers);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.relay.stop();
    await this.workers.stop();
    await this.queue.stop(STOP_TIMEOUT_MS);
  }
}

/**
 * Committed changes, followed: the audit trail is the outbox. A relay moves each committed event
 * to the consumers of its action (declared with `@EventConsumer` in their own modules), which run
 * after the commit in worker processes (`SERVICE_ROLES`), each at least once, retried with
 * backoff. Also the process's pg-boss ({@link JobQueue}), for the modules that queue jobs.
 */
@Module({
  imports: [DiscoveryModule, ConfigModule.forFeature(eventsSettings)],
  providers: [
    {
      provide: JobQueue,
      inject: [APP_OPTIONS, eventsSettings.KEY, PinoLogger],
      useFactory: (options: AppOptions, settings: EventsSettings, logger: PinoLogger) => {
        logger.setContext('Events');
        return new JobQueue({
          databaseUrl: options.databaseUrl,
          works: runsWorker(settings),
          logger,
        });
      },
    },
    {
      provide: EventRelayRepository,
      inject: [DatabasePools],
      useFactory: (pools: DatabasePools) =>
        new EventRelayRepository(
          pools.createStatementPool({
            name: 'event relay',
            size: 1,
            statementTimeoutMs: RELAY_STATEMENT_TIMEOUT_MS,
          }),
        ),
    },
    {
      provide: EventRelay,
      inject: [EventRelayRepository, MetricsService, PinoLogger],
      useFactory: (events: EventRelayRepository, metrics: MetricsService, logger: PinoLogger) => {
        logger.setContext('Events');
        return new EventRelay(events, metrics, logger);
      },
    },
    {
      provide: EventWorkers,
      inject: [MetricsService, PinoLogger],
      useFactory: (metrics: MetricsService, logger: PinoLogger) => {
        logger.setContext('Events');
        return new EventWorkers(metrics, logger);
      },
    },
    EventsLifecycle,
  ],
  exports: [JobQueue],
})
export class EventsModule {}
