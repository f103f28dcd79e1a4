import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, Response } from 'express';
import { createHttpAdapter } from './app.setup';
import { REQUEST_PROPERTIES } from './http-server';

describe('the HTTP server of createHttpAdapter()', () => {
  let server: Server;
  let seen: { request: string[]; response: string[] } | undefined;

  beforeAll(async () => {
    const adapter = createHttpAdapter();
    adapter
      .getInstance<{ get: (path: string, handler: unknown) => void }>()
      .get('/', (req: Request, res: Response) => {
        seen = { request: Object.keys(req), response: Object.keys(res) };
        res.end();
      });
    adapter.initHttpServer({});
    server = adapter.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("serves requests born with the service's properties, and responses with their status", async () => {
    const { port } = server.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    expect(answer.status).toBe(200);
    expect(seen?.request).toEqual(expect.arrayContaining([...REQUEST_PROPERTIES]));
    expect(seen?.response).toEqual(expect.arrayContaining(['statusCode', 'statusMessage']));
  });

  it("keeps Nest's own server where Nest has a setting to apply", () => {
    const adapter = createHttpAdapter();
    adapter.initHttpServer({ forceCloseConnections: true });
    const server = adapter.getHttpServer() as Server & { listeners(event: string): unknown[] };
    // Nest's server tracks its connections (to close them on shutdown) from its creation.
    expect(server.listeners('connection').length).toBeGreaterThan(0);
  });
});
