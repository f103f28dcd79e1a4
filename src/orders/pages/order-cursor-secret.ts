import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { orderSettings, type OrderSettings } from '../orders.settings';

/**
 * The key v2's cursors are signed with (order-cursor.ts): `CURSOR_SECRET` when configured (every
 * instance of a deployment must then be given the same), else the secret the migration
 * CreateOrderCursorSecret generated into the database, which every instance reads alike. Read on
 * the first page that needs it, then kept; a failed read is tried again on the next page.
 */
@Injectable()
export class OrderCursorSecret {
  private key?: Buffer;
  private loading?: Promise<Buffer>;

  constructor(
    @Inject(orderSettings.KEY) settings: OrderSettings,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    const configured = settings.CURSOR_SECRET;
    if (configured !== undefined) this.key = Buffer.from(configured, 'utf8');
  }

  /** The key: read (or created) once, then kept. */
  async get(): Promise<Buffer> {
    if (this.key) return this.key;
    this.loading ??= this.load().then(
      (key) => (this.key = key),
      (error: unknown) => {
        this.loading = undefined;
        throw error;
      },
    );
    return this.loading;
  }

  /** The stored secret (read-only: the service needs no more than SELECT on its table). */
  private async load(): Promise<Buffer> {
    const [row] = await this.dataSource.query<({ secret: Buffer } | undefined)[]>(
      'SELECT secret FROM order_cursor_secret WHERE id = 1',
    );
    if (!row) {
      throw new Error(
        'order_cursor_secret holds no secret: run the migrations, or set CURSOR_SECRET',
      );
    }
    return row.secret;
  }
}
