import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { keyActor, type AuditActor } from '../audit/audit-event';
import { httpRequestOf } from '../common/http/http-context';

/**
 * Who makes the request, for the audit trail: `key:<id>` of its API key, with the request's id
 * (`X-Request-Id`, or the one the service gave it). Read from what the guards and the request
 * observer already put on the request: no lookup. For routes that need a key (not `@Public()`).
 */
export const RequestActor = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AuditActor => {
    const req = httpRequestOf(context);
    if (!req.auth) throw new Error('@RequestActor() on a route that needs no API key');
    return keyActor(req.auth.keyId, typeof req.id === 'string' ? req.id : undefined);
  },
);
