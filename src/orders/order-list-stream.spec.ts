import { once } from 'node:events';
import type { OrderRow } from './order-json';
import { OrderListStream, OrdersAfter } from './order-list-stream';
import { LIST_BATCH_SIZE } from './orders.sql';

const row = (id: number): OrderRow => [String(id), '7', 1, null, false, 'pending'];
const rows = (from: number, count: number): OrderRow[] =>
  Array.from({ length: count }, (_, i) => row(from + i));

/** Batches from a table of `total` orders (ids 1..total), recording what was asked. */
function table(total: number): { ordersAfter: OrdersAfter; asked: string[] } {
  const asked: string[] = [];
  const ordersAfter: OrdersAfter = (lastId) => {
    asked.push(lastId);
    const from = Number(lastId) + 1;
    return Promise.resolve(rows(from, Math.max(0, Math.min(LIST_BATCH_SIZE, total - from + 1))));
  };
  return { ordersAfter, asked };
}

async function readAll(list: OrderListStream): Promise<string> {
  let text = '';
  for await (const chunk of list) text += String(chunk);
  return text;
}

describe('OrderListStream', () => {
  it('sends the first rows, then each batch after the last id sent, as one JSON array', async () => {
    const total = 2 * LIST_BATCH_SIZE + 500;
    const { ordersAfter, asked } = table(total);
    const list = new OrderListStream(rows(1, LIST_BATCH_SIZE + 1), ordersAfter);

    const orders = JSON.parse(await readAll(list)) as { id: number }[];

    expect(orders.map((o) => o.id)).toEqual(rows(1, total).map((r) => Number(r[0])));
    expect(asked).toEqual([String(LIST_BATCH_SIZE + 1), String(2 * LIST_BATCH_SIZE + 1)]);
  });

  it('ends after a last batch that is exactly full, on the empty one after it', async () => {
    const total = 2 * LIST_BATCH_SIZE + 1;
    const { ordersAfter, asked } = table(total);
    const list = new OrderListStream(rows(1, LIST_BATCH_SIZE + 1), ordersAfter);

    const text = await readAll(list);

    expect((JSON.parse(text) as unknown[]).length).toBe(total);
    expect(asked).toEqual([String(LIST_BATCH_SIZE + 1), String(total)]);
  });

  it('fails with the error of a batch, never closing the array', async () => {
    const failure = new Error('canceling statement due to statement timeout');
    const list = new OrderListStream(rows(1, LIST_BATCH_SIZE + 1), () => Promise.reject(failure));
    const chunks: string[] = [];
    list.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));

    const [error] = (await once(list, 'error')) as [Error];

    expect(error).toBe(failure);
    expect(chunks.join('').endsWith(']')).toBe(false);
  });

  it('no longer wants a batch still waiting its turn once the list is abandoned', async () => {
    let wanted: (() => boolean) | undefined;
    const list = new OrderListStream(rows(1, LIST_BATCH_SIZE + 1), (_, isWanted) => {
      wanted = isWanted;
      return new Promise<OrderRow[]>(() => undefined);
    });
    expect(wanted?.()).toBe(true);

    list.destroy();
    await once(list, 'close');

    expect(wanted?.()).toBe(false);
  });
});
