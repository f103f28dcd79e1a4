import { Inject, Injectable } from '@nestjs/common';
import { orderSettings, type OrderSettings } from '../orders.settings';
import { OrderPagesRepository } from './order-pages.repository';

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
    private readonly pages: OrderPagesRepository,
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

  private async load(): Promise<Buffer> {
    const secret = await this.pages.storedCursorSecret();
    if (secret === undefined) {
      throw new Error(
        'order_cursor_secret holds no secret: run the migrations, or set CURSOR_SECRET',
      );
    }
    return secret;
  }
}
