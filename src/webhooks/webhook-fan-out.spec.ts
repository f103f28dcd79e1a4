import type { RelayedEvent } from '../events/event-consumer';
import type { JobQueue } from '../events/job-queue';
import type { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import type { WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { WebhookFanOut } from './webhook-fan-out';
import type { MessageEvent, WebhookMessages } from './webhook-messages';

const event = (id: string, action: string): RelayedEvent => ({
  id,
  at: '2026-01-02T03:04:05.678Z',
  actor: 'cli:ops',
  action,
  target: `order:${id}`,
});

/** A fan-out whose endpoints subscribe to `subscribed`, and what it asked of its parts. */
function fanOut(subscribed: string[]) {
  const messages = {
    bodiesOf: jest.fn((events: readonly MessageEvent[]) =>
      Promise.resolve(events.map((e) => `{"type":"${e.type}"}`)),
    ),
  };
  const deliveries = {
    transaction: jest.fn((work: (manager: unknown) => Promise<unknown>) => work({})),
    fanOut: jest.fn(() => Promise.resolve<string[]>([])),
  };
  const endpoints = { subscribedActions: () => Promise.resolve(subscribed) };
  const queue = { started: () => Promise.resolve({ insert: jest.fn() }) };
  return {
    messages,
    deliveries,
    consumer: new WebhookFanOut(
      endpoints as unknown as WebhookEndpointsRepository,
      deliveries as unknown as WebhookDeliveriesRepository,
      queue as unknown as JobQueue,
      messages as unknown as WebhookMessages,
    ),
  };
}

describe('WebhookFanOut', () => {
  it('makes the bodies, and deliveries, of the events whose action an endpoint subscribes to only', async () => {
    const { messages, deliveries, consumer } = fanOut(['order.cancelled']);
    await consumer.consumeBatch([
      event('1', 'key.created'),
      event('2', 'order.cancelled'),
      event('3', 'webhook.changed'),
    ]);
    expect(messages.bodiesOf).toHaveBeenCalledTimes(1);
    expect(messages.bodiesOf.mock.calls[0][0].map((e) => e.target)).toEqual(['order:2']);
    expect(deliveries.fanOut).toHaveBeenCalledWith(
      {},
      {
        ids: ['2'],
        actions: ['order.cancelled'],
        at: ['2026-01-02T03:04:05.678Z'],
        bodies: ['{"type":"order.cancelled"}'],
      },
    );
  });

  it('reads no record and opens no transaction for events no endpoint subscribes to', async () => {
    const { messages, deliveries, consumer } = fanOut(['order.cancelled']);
    await consumer.consumeBatch([event('1', 'key.created'), event('2', 'key.revoked')]);
    expect(messages.bodiesOf).not.toHaveBeenCalled();
    expect(deliveries.transaction).not.toHaveBeenCalled();
  });
});
