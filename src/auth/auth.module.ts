import { Global, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditTrail } from '../audit/audit-trail';
import { AuditModule } from '../audit/audit.module';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { ApiKey } from './api-key.entity';
import { ApiKeyStore } from './api-key.store';
import { authSettings } from './auth.settings';
import { DemoKeysSeeder } from './demo-keys.seeder';
import { KeyCache } from './key-cache';
import { KeyChangesFeed } from './key-changes.feed';
import { KeysService } from './keys.service';
import { LastUseRecorder } from './last-use-recorder';
// What events about keys carry, for their consumers.
import './key.events';

/**
 * API keys: the store; the key cache (with the feed of key changes that keeps it current) and the
 * recorder of last uses; the authenticator that resolves a bearer key to its plan; the demo keys
 * of the embedded default; the keys service of key administration (with its audit
 * trail), for the admin API. The guards that use them are registered, in order, by
 * AppModule. Global: one key cache, feed and store per application, whichever module asks (the
 * admin application is given these same instances, `AdminAppModule`).
 */
@Global()
@Module({
  imports: [ConfigModule.forFeature(authSettings), TypeOrmModule.forFeature([ApiKey]), AuditModule],
  providers: [
    {
      provide: ApiKeyStore,
      inject: [DataSource],
      useFactory: (ds: DataSource) => new ApiKeyStore(ds),
    },
    {
      provide: KeysService,
      inject: [DataSource, ApiKeyStore, AuditTrail, KeyCache],
      useFactory: (ds: DataSource, store: ApiKeyStore, trail: AuditTrail, cache: KeyCache) =>
        new KeysService(ds, store, trail, cache),
    },
    KeyCache,
    LastUseRecorder,
    ApiKeyAuthenticator,
    KeyChangesFeed,
    DemoKeysSeeder,
  ],
  exports: [ApiKeyStore, ApiKeyAuthenticator, KeyCache, KeysService],
})
export class AuthModule {}
