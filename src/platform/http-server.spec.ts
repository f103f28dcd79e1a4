import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express, Request, Response } from 'express';
import { createHttpAdapter } from '../app.setup';
import { EXPRESS_REQUEST_PROPERTIES, REQUEST_PROPERTIES, RESPONSE_PROPERTIES } from './http-server';

describe('the HTTP server of createHttpAdapter()', () => {
  let server: Server;
  let adapter: ReturnType<typeof createHttpAdapter>;
  const born: { request?: string[]; response?: string[]; prototypes?: object[] } = {};
  const served: { request?: string[]; response?: string[]; prototypes?: object[] } = {};

  beforeAll(async () => {
    adapter = createHttpAdapter();
    const express = adapter.getInstance<{ get: (path: string, handler: unknown) => void }>();
    express.get('/orders/:id', (req: Request, res: Response) => {
      // As the service's layers do: a listener on the request (its first) and on the response.
      req.once('close', () => undefined);
      res.once('close', () => undefined);
      served.request = Object.keys(req);
      served.prototypes = [Object.getPrototypeOf(req), Object.getPrototypeOf(res)];
      res.end();
      served.response = Object.keys(res);
    });
    adapter.initHttpServer({});
    server = adapter.getHttpServer();
    // Before Express's own listener: the request and the response as Node creates them.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      born.request = Object.keys(req);
      born.response = Object.keys(res);
      born.prototypes = [Object.getPrototypeOf(req), Object.getPrototypeOf(res)];
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('creates requests and responses with every property they get while served', async () => {
    const { port } = server.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}/orders/7`);
    expect(answer.status).toBe(200);
    expect(born.request).toEqual(
      expect.arrayContaining([...REQUEST_PROPERTIES, ...EXPRESS_REQUEST_PROPERTIES]),
    );
    expect(born.response).toEqual(expect.arrayContaining([...RESPONSE_PROPERTIES]));
    // Routed by Express, answered, and not one property added (in the same order, too: the
    // objects kept the hidden class they were born with).
    expect(served.request).toEqual(born.request);
    expect(served.response).toEqual(born.response);
  });

  it("creates them with the Express application's prototypes, which Express then keeps", async () => {
    const { port } = server.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}/orders/8`);
    expect(answer.status).toBe(200);
    const { request, response } = adapter.getInstance<Express>();
    expect(born.prototypes?.[0]).toBe(request);
    expect(born.prototypes?.[1]).toBe(response);
    expect(served.prototypes?.[0]).toBe(request);
    expect(served.prototypes?.[1]).toBe(response);
  });

  it("keeps Nest's own server where Nest has a setting to apply", () => {
    const adapter = createHttpAdapter();
    adapter.initHttpServer({ forceCloseConnections: true });
    const server = adapter.getHttpServer() as Server;
    // Nest's server tracks its connections (to close them on shutdown) from its creation.
    expect(server.listeners('connection').length).toBeGreaterThan(0);
  });
});
