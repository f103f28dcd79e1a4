import { createServer, type Server, type Socket } from 'node:net';
import { StoreOrdersClient } from 'store-orders-client';

/**
 * A server on loopback that reads requests and never answers: the client's own `fetch` (undici)
 * must give up at its timeout. `requests` counts the connections a request came on (undici may
 * open one ahead of need).
 */
async function silentServer(): Promise<{ server: Server; url: string; requests: () => number }> {
  const sockets: Socket[] = [];
  let requests = 0;
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.once('data', () => requests++);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const close = server.close.bind(server);
  server.close = (callback) => {
    for (const socket of sockets) socket.destroy();
    return close(callback);
  };
  return { server, url: `http://127.0.0.1:${address.port}`, requests: () => requests };
}

describe('the TypeScript client and a server that never answers', () => {
  it('cuts each try at its timeout, retrying a GET and never a POST', async () => {
    const silent = await silentServer();
    try {
      const client = new StoreOrdersClient({
        baseUrl: silent.url,
        apiKey: 'k',
        timeout: 300,
        retry: { maxTries: 2 },
      });
      const started = Date.now();
      await expect(client.orders.list()).rejects.toMatchObject({ name: 'TimeoutError' });
      expect(silent.requests()).toBe(2);
      // Two tries of 300 ms and a backoff of 0.5 to 1 s between them.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1100);

      await expect(
        client.admin.POST('/admin/v1/keys', { body: { plan: 'free' } }),
      ).rejects.toMatchObject({ name: 'TimeoutError' });
      expect(silent.requests()).toBe(3);
    } finally {
      await new Promise((resolve) => silent.server.close(resolve));
    }
  });
});
