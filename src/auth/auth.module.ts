import { Global, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditTrail } from '../audit/audit-trail';
import { AuditModule } from '../audit/audit.module';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { ApiKey } from './api-key.entity';
import { ApiKeysRepository } from './api-keys.repository';
import { authSettings } from './auth.settings';
import { DemoKeysSeeder } from './demo-keys.seeder';
import { KeyCache } from './key-cache';
import { KeyChangesFeed } from './key-changes.feed';
import { KeysService } from './keys.service';
import { LastUseRecorder } from './last-use-recorder';
// What events about keys carry, for their consumers.
import './key.events';

/**
 * API keys: their repository; the key cache (with the feed of key changes that keeps it current)
 * and the recorder of last uses; the authenticator that resolves a bearer key to its plan; the
 * demo keys of the embedded default; the keys service of key administration (with its audit
 * trail), for the admin API. The guards that use them are registered, in order, by
 * AppModule. Global: one key cache, feed and repository per application, whichever module asks
 * (the admin application is given these same instances, `AdminAppModule`).
 */
@Global()
@Module({
  imports: [ConfigModule.forFeature(authSettings), TypeOrmModule.forFeature([ApiKey]), AuditModule],
  providers: [
    {
      provide: ApiKeysRepository,
      inject: [DataSource],
      useFactory: (ds: DataSource) => new ApiKeysRepository(ds),
    },
    {
      provide: KeysService,
      inject: [ApiKeysRepository, AuditTrail, KeyCache],
      useFactory: (store: ApiKeysRepository, trail: AuditTrail, cache: KeyCache) =>
        new KeysService(store, trail, cache),
    },
    KeyCache,
    LastUseRecorder,
    ApiKeyAuthenticator,
    KeyChangesFeed,
    DemoKeysSeeder,
  ],
  exports: [ApiKeysRepository, ApiKeyAuthenticator, KeyCache, KeysService],
})
export class AuthModule {}
