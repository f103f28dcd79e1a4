import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { ApiKey } from './api-key.entity';
import { ApiKeyStore } from './api-key.store';
import { DemoKeysSeeder } from './demo-keys.seeder';
import { KeyChangesFeed } from './key-changes.feed';

/**
 * API keys: the store, the authenticator that resolves a bearer key to its plan (with the feed of
 * key changes that keeps its cache current), and the demo keys of the embedded default. The guards
 * that use them are registered, in order, by AppModule.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ApiKey])],
  providers: [
    {
      provide: ApiKeyStore,
      inject: [DataSource],
      useFactory: (ds: DataSource) => new ApiKeyStore(ds),
    },
    ApiKeyAuthenticator,
    KeyChangesFeed,
    DemoKeysSeeder,
  ],
  exports: [ApiKeyStore, ApiKeyAuthenticator],
})
export class AuthModule {}
