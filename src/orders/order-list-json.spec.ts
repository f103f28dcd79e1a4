import { EventEmitter, once } from 'node:events';
import type { PoolClient } from 'pg';
import type Cursor from 'pg-cursor';
import type { OrderRow } from './order-json';
import { OrderListJson } from './order-list-json';

/**
 * A pooled connection and a cursor whose reads are never answered: what pg-cursor does when the
 * connection dies between the last batch's CommandComplete and its ReadyForQuery (it ignores
 * errors once its portal is closed; seen as a hung list, and a shutdown that never ended, when
 * PostgreSQL stopped under load).
 */
function unansweredCursor(): { client: PoolClient & EventEmitter; cursor: Cursor<OrderRow> } {
  const client = Object.assign(new EventEmitter(), {
    connection: { stream: { cork: () => undefined, uncork: () => undefined } },
    release: jest.fn(),
  });
  const cursor = { read: () => new Promise<OrderRow[]>(() => undefined) };
  return {
    client: client as unknown as PoolClient & EventEmitter,
    cursor: cursor as unknown as Cursor<OrderRow>,
  };
}

const FIRST: OrderRow[] = [['1', '7', 1, null, false, 'pending']];

describe('OrderListJson', () => {
  it('fails, and releases its connection as broken, when the connection ends under a read', async () => {
    const source = unansweredCursor();
    const list = new OrderListJson(FIRST, source);
    const chunks: string[] = [];
    list.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
    await new Promise(setImmediate);
    expect(chunks).toEqual(['[{"id":1,"petId":7,"quantity":1,"complete":false,"status":"pending"}']);

    source.client.emit('end');

    const [error] = (await once(list, 'error')) as [Error];
    expect(error.message).toBe('database connection lost mid-list');
    expect(source.client.release).toHaveBeenCalledWith(error);
  });

  it('releases its connection when the client went away and the connection then ends', async () => {
    const source = unansweredCursor();
    const list = new OrderListJson(FIRST, source);
    list.destroy();
    await new Promise(setImmediate);
    // Closing waits for the read in flight, which pg-cursor will never answer.
    expect(source.client.release).not.toHaveBeenCalled();

    source.client.emit('end');

    await once(list, 'close');
    expect(source.client.release).toHaveBeenCalledTimes(1);
    expect(source.client.release).toHaveBeenCalledWith(expect.any(Error));
  });
});
