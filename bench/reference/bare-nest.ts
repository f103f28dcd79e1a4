/**
 * The benchmark's reference point: what NestJS on Express costs by itself. The same two routes
 * as the service, the same SQL and the same JSON (the service's own modules, so no faster code
 * path), a pool of 10, and nothing else: no API key, no rate limit, no request log, no metrics, no
 * security headers, no body limit. Its ratio to the baseline is the ceiling the framework sets on
 * this machine; the service's distance to it is what its own features cost.
 *
 * Started by bench/run.ts like the baseline (DATABASE_URL, PORT), logging its URL the same way.
 */
import 'reflect-metadata';
import { Controller, Delete, Get, HttpCode, Module, Param, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Response } from 'express';
import { Pool } from 'pg';
import { OrderRow, orderJson } from '../../src/orders/order-json';
import { CANCEL_ORDER, ORDER_STATUS } from '../../src/orders/orders.sql';
import { LIST_ORDERS } from './list-orders';

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

@Controller('v1/store/orders')
class OrdersController {
  @Get()
  async list(@Res() res: Response): Promise<void> {
    const { rows } = await pool.query<OrderRow>({ ...LIST_ORDERS, rowMode: 'array' });
    res.status(200).type('application/json');
    res.end(`[${rows.map(orderJson).join(',')}]`);
  }

  /** The benchmark cancels an order already cancelled: the 204 path only. */
  @Delete(':orderId')
  @HttpCode(204)
  async cancel(@Param('orderId') orderId: string): Promise<void> {
    // No API key here: a fixed actor for the audit trail, and no request id.
    const { rows } = await pool.query<{ status: string }>({
      ...CANCEL_ORDER,
      values: [orderId, 'key:reference', null],
    });
    if (rows[0]?.status === 'pending') await pool.query({ ...ORDER_STATUS, values: [orderId] });
  }
}

@Module({ controllers: [OrdersController] })
class BareModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(BareModule, {
    logger: false,
    bodyParser: false,
  });
  app.set('etag', false);
  await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  const port = new URL(await app.getUrl()).port;
  process.stdout.write(`bare NestJS listening on http://127.0.0.1:${port}/v1\n`);
  const stop = (): void => {
    void app
      .close()
      .then(() => pool.end())
      .finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
