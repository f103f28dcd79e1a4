import type { ConfigType } from '@nestjs/config';
import { defineSettings, oneOf, type Rule } from '../config/settings';

export const SERVICE_ROLE_NAMES = ['api', 'worker'] as const;
export type ServiceRole = (typeof SERVICE_ROLE_NAMES)[number];

/** A comma-separated list of roles, each known, at least one. */
function roles(): Rule<ServiceRole[]> {
  const expected = `a comma-separated list of ${SERVICE_ROLE_NAMES.join(', ')} (at least one)`;
  return {
    parse(raw) {
      const parts = raw.split(',').map((part) => part.trim());
      if (parts.some((part) => !(SERVICE_ROLE_NAMES as readonly string[]).includes(part))) {
        return { expected };
      }
      return { value: [...new Set(parts as ServiceRole[])] };
    },
  };
}

/** What a process runs: the API, the work that follows committed changes, or both. */
export const eventsSettings = defineSettings('events', {
  SERVICE_ROLES: {
    rule: roles(),
    default: ['api', 'worker'],
    description:
      'what this process runs: `api` serves HTTP (and the admin listener), `worker` relays committed audit events to their consumers and runs them (webhook deliveries among them); `api,worker`: both in one process',
  },
  WEBHOOK_DELIVERY: {
    rule: oneOf(['on', 'off']),
    default: 'on',
    description:
      '`off`: the same as leaving `worker` out of `SERVICE_ROLES` (this process relays, consumes and delivers nothing; a worker process does)',
  },
});
export type EventsSettings = ConfigType<typeof eventsSettings>;

/** Whether a process with these settings runs the relay, the consumers and the deliveries. */
export function runsWorker(settings: EventsSettings): boolean {
  return settings.SERVICE_ROLES.includes('worker') && settings.WEBHOOK_DELIVERY === 'on';
}

/** Whether a process with these settings serves HTTP. */
export function runsApi(settings: EventsSettings): boolean {
  return settings.SERVICE_ROLES.includes('api');
}
