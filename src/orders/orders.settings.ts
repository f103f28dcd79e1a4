import type { ConfigType } from '@nestjs/config';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { defineSettings, toInt } from '../config/settings';

/** The orders module's own environment variables (v2's pages), with their defaults. */
export class OrderSettingsSchema {
  /**
   * The secret v2's cursors are signed with (HMAC-SHA-256), the same on every instance; unset,
   * the one generated into the database by the migrations. At least 32 characters.
   */
  @IsOptional()
  @IsString()
  @Matches(/^\S{32,}$/, {
    message:
      'CURSOR_SECRET must be at least 32 characters without spaces, e.g. openssl rand -base64 32',
  })
  CURSOR_SECRET?: string;

  /**
   * The database time one v2 page may take in all (waiting for a connection included); past it
   * the statement is cancelled and the page answered 503.
   */
  @Transform(toInt)
  @IsInt({ message: 'PAGE_DATABASE_BUDGET_MS must be an integer of at least 50' })
  @Min(50, { message: 'PAGE_DATABASE_BUDGET_MS must be an integer of at least 50' })
  PAGE_DATABASE_BUDGET_MS: number = 1000;

  /** Connections per instance for v2's pages, apart from the pool of DATABASE_POOL_SIZE. */
  @Transform(toInt)
  @IsInt({ message: 'PAGE_POOL_SIZE must be an integer between 1 and 200' })
  @Min(1, { message: 'PAGE_POOL_SIZE must be an integer between 1 and 200' })
  @Max(200, { message: 'PAGE_POOL_SIZE must be an integer between 1 and 200' })
  PAGE_POOL_SIZE: number = 5;
}

/**
 * `ConfigModule.forFeature(orderSettings)` in OrdersModule; injected as
 * `@Inject(orderSettings.KEY) settings: OrderSettings`.
 */
export const orderSettings = defineSettings('orders', OrderSettingsSchema);
export type OrderSettings = ConfigType<typeof orderSettings>;
