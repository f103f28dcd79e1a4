import {
  createParamDecorator,
  type ExecutionContext,
  ValidationPipe,
  type ValidationError,
} from '@nestjs/common';
import type { Request } from 'express';
import { ApiException } from '../common/errors/api.exception';
import { httpRequestOf } from '../common/http/http-context';
import { AdminErrors } from './admin.errors';

/** The bodies the admin listener read (at most 16 KiB each), by request, until it goes. */
const bodies = new WeakMap<Request, Buffer>();

/** `configureApp`'s `keepBody` for the admin application. */
export function keepAdminBody(req: Request, body: Buffer): void {
  bodies.set(req, body);
}

const invalidBody = (message: string): ApiException =>
  new ApiException(AdminErrors.INVALID_BODY, message);

/**
 * The request's body as a JSON object (`{}` when there is none): `Content-Type:
 * application/json`, a JSON object, or 400 INVALID_BODY. The fields are checked by the
 * {@link adminBodyPipe} on the handler's parameter type.
 */
export const JsonBody = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const req = httpRequestOf(context);
  const body = bodies.get(req);
  if (body === undefined || body.length === 0) return {};
  if (!req.is('application/json')) {
    throw invalidBody('the body must be JSON, sent with Content-Type: application/json');
  }
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalidBody('the body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidBody('the body must be a JSON object');
  }
  return value;
});

/** The first problem found, naming its field (`scopes.0`: an element of an array). */
function firstProblem(errors: ValidationError[], parent = ''): string {
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const messages = Object.values(error.constraints ?? {});
    if (messages.length > 0) {
      // class-validator's messages start with the property's own name; say the full one.
      const message = messages[0];
      return message.startsWith(error.property)
        ? `${field}${message.slice(error.property.length)}`
        : `${field}: ${message}`;
    }
    if (error.children?.length) return firstProblem(error.children, field);
  }
  return 'the body is not valid';
}

/**
 * Checks a body against its class (class-validator): an unknown field, a field of the wrong type
 * or out of its rules is 400 INVALID_BODY, naming the field. Values are never converted.
 */
export const adminBodyPipe = new ValidationPipe({
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  validateCustomDecorators: true,
  transform: true,
  transformOptions: { enableImplicitConversion: false },
  exceptionFactory: (errors) => invalidBody(firstProblem(errors)),
});
