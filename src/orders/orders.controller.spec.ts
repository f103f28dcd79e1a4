import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { NextFunction, Request, Response } from 'express';
import { getLoggerToken } from 'nestjs-pino';
import request from 'supertest';
import type { AuditActor } from '../audit/audit-event';
import { ApiException } from '../common/errors/api.exception';
import { JsonStreamSender } from '../common/http/send-json-stream';
import { API_VERSIONING } from '../common/http/versioning';
import { OrderErrors } from './order.errors';
import { OrdersController } from './orders.controller';
import { OrdersService } from './orders.service';

/**
 * The controller alone, through HTTP, with its service replaced: what it routes, parses and
 * answers, without a database. The idiom to copy for a new module's controller
 * (`Test.createTestingModule(...).overrideProvider(...)`); its behaviour against the real
 * database is the e2e suites' (test/orders.e2e-spec.ts).
 */
describe('OrdersController', () => {
  let app: INestApplication;
  const orders = { cancel: jest.fn<Promise<void>, [string, AuditActor]>(), listAsJson: jest.fn() };

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [OrdersController],
      providers: [
        OrdersService,
        {
          provide: JsonStreamSender,
          useValue: new JsonStreamSender({
            stallTimeoutMs: 30_000,
            shutdown: { timeoutMs: 25_000, drainDelayMs: 0 },
          }),
        },
        { provide: getLoggerToken(OrdersController.name), useValue: { error: jest.fn() } },
      ],
    })
      .overrideProvider(OrdersService)
      .useValue(orders)
      .compile();
    app = moduleRef.createNestApplication({ logger: false });
    // What the request observer and the global guards put on an authenticated request.
    app.use((req: Request, _res: Response, next: NextFunction) => {
      req.id = 'req-1';
      req.auth = {
        keyId: 'key-1',
        familyId: 'key-1',
        plan: 'free',
        limits: { perMinute: 60, perDay: 1000 },
        bannedUntil: null,
        expiresAt: null,
        scopes: ['*'],
      };
      next();
    });
    app.enableVersioning(API_VERSIONING);
    await app.init();
  });
  afterAll(() => app.close());
  beforeEach(() => {
    jest.resetAllMocks();
  });

  it('cancels the order named in the path, keeping an int64 id exact, and answers 204', async () => {
    orders.cancel.mockResolvedValue(undefined);
    await request(app.getHttpServer()).delete('/v1/store/orders/9007199254740993').expect(204);
    expect(orders.cancel).toHaveBeenCalledWith('9007199254740993', expect.anything());
  });

  it("cancels as the request's key, with the request's id, for the audit trail", async () => {
    orders.cancel.mockResolvedValue(undefined);
    await request(app.getHttpServer()).delete('/v1/store/orders/7').expect(204);
    expect(orders.cancel).toHaveBeenCalledWith('7', { actor: 'key:key-1', requestId: 'req-1' });
  });

  it('refuses an id that is not an int64 before asking the service', async () => {
    await request(app.getHttpServer()).delete('/v1/store/orders/12abc').expect(400);
    expect(orders.cancel).not.toHaveBeenCalled();
  });

  it("answers the service's error with its status", async () => {
    orders.cancel.mockRejectedValue(new ApiException(OrderErrors.ORDER_ALREADY_SHIPPED));
    await request(app.getHttpServer()).delete('/v1/store/orders/7').expect(409);
  });

  it('sends the list the service reads', async () => {
    orders.listAsJson.mockResolvedValue('[{"id":1}]');
    const res = await request(app.getHttpServer()).get('/v1/store/orders').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.text).toBe('[{"id":1}]');
  });
});
