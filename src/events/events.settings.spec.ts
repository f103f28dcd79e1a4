import { eventsSettings, runsApi, runsWorker } from './events.settings';

describe('process roles', () => {
  it('runs both by default, and what SERVICE_ROLES names otherwise', () => {
    const both = eventsSettings.read({});
    expect([runsApi(both), runsWorker(both)]).toEqual([true, true]);
    const api = eventsSettings.read({ SERVICE_ROLES: 'api' });
    expect([runsApi(api), runsWorker(api)]).toEqual([true, false]);
    const worker = eventsSettings.read({ SERVICE_ROLES: ' worker ' });
    expect([runsApi(worker), runsWorker(worker)]).toEqual([false, true]);
  });

  it('takes WEBHOOK_DELIVERY=off as leaving the worker out', () => {
    const off = eventsSettings.read({ SERVICE_ROLES: 'api,worker', WEBHOOK_DELIVERY: 'off' });
    expect([runsApi(off), runsWorker(off)]).toEqual([true, false]);
  });

  it.each(['api,web', 'workers', ',', 'api;worker'])('refuses %p', (value) => {
    expect(eventsSettings.problems({ SERVICE_ROLES: value })).toEqual([
      expect.stringMatching(/^SERVICE_ROLES must be a comma-separated list of api, worker/),
    ]);
  });
});
