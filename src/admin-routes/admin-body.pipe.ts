import {
  type ArgumentMetadata,
  createParamDecorator,
  type ExecutionContext,
  type PipeTransform,
  ValidationPipe,
  type ValidationError,
} from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
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

/** The class-validator message of an unknown field, as {@link firstProblem} words it. */
const unknownField = (name: string): string => `${name}: property ${name} should not exist`;

/**
 * Names never taken for a field, whatever a class declares: `JSON.parse` makes `__proto__` an
 * own property, and class-transformer would copy it (and these) onto the body's object.
 */
const PROTOTYPE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * C0 (NUL included), DEL and C1: never in a text field. PostgreSQL refuses NUL in text, and the
 * others would be kept and printed as they are wherever a key's name or scopes are shown.
 */
const CONTROL_CHARACTER = /\p{Cc}/u;

/** A body's fields by name: a list (an array) or a single value, and whether text goes there. */
type BodySchema = Map<string, { list: boolean; text: boolean }>;

const schemas = new WeakMap<object, BodySchema>();

/** The fields of a body's class, from its class-validator decorators (no class: none). */
function schemaOf(type: ArgumentMetadata['metatype']): BodySchema {
  if (type === undefined) return new Map();
  const known = schemas.get(type);
  if (known) return known;
  const schema: BodySchema = new Map();
  for (const rule of getMetadataStorage().getTargetValidationMetadatas(type, '', false, false)) {
    const field = schema.get(rule.propertyName) ?? { list: false, text: false };
    if (rule.name === 'isArray') field.list = true;
    if (rule.name === 'isString') field.text = true;
    schema.set(rule.propertyName, field);
  }
  schemas.set(type, schema);
  return schema;
}

/** Why one value (a field, or an element of a list) is refused before the class sees it. */
function valueProblem(value: unknown, name: string, text: boolean): string | undefined {
  // An optional field is left out, never null: a handler would take null for a value.
  if (value === null) return `${name} must not be null`;
  if (Array.isArray(value)) return `${name} must not be an array`;
  if (typeof value === 'object') return `${name} must not be an object`;
  if (text && typeof value === 'string' && CONTROL_CHARACTER.test(value)) {
    return `${name} must not contain control characters`;
  }
  return undefined;
}

/**
 * The first problem of a body's shape: an unknown field (a prototype's name included), a null, an
 * object or array nested deeper than the schema, control characters in a text field. Checked on the
 * parsed JSON before class-transformer copies it, which recurses without bound and would carry
 * `__proto__` over; unknown fields first, as class-validator reports them.
 */
function shapeProblem(body: Record<string, unknown>, schema: BodySchema): string | undefined {
  const names = Object.keys(body);
  const unknown = names.find((name) => !schema.has(name) || PROTOTYPE_NAMES.has(name));
  if (unknown !== undefined) return unknownField(unknown);
  for (const name of names) {
    const { list, text } = schema.get(name) ?? { list: false, text: false };
    const value = body[name];
    if (!list || !Array.isArray(value)) {
      const problem = valueProblem(value, name, text);
      if (problem) return problem;
      continue;
    }
    for (const [index, element] of value.entries()) {
      const problem = valueProblem(element, `${name}.${index}`, text);
      if (problem) return problem;
    }
  }
  return undefined;
}

/**
 * Checks a body against its class: first its shape ({@link shapeProblem}), then the fields
 * (class-validator): an unknown field, a field of the wrong type or out of its rules is 400
 * INVALID_BODY, naming the field. Values are never converted.
 */
class AdminBodyPipe implements PipeTransform<Record<string, unknown>> {
  private readonly fields = new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    validateCustomDecorators: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => invalidBody(firstProblem(errors)),
  });

  async transform(body: Record<string, unknown>, metadata: ArgumentMetadata): Promise<unknown> {
    const problem = shapeProblem(body, schemaOf(metadata.metatype));
    if (problem !== undefined) throw invalidBody(problem);
    return await this.fields.transform(body, metadata);
  }
}

export const adminBodyPipe = new AdminBodyPipe();

/**
 * For an operation that takes no body: any field is refused as an unknown one (an empty body or
 * `{}` is none).
 */
class NoBodyPipe implements PipeTransform<Record<string, unknown>> {
  transform(body: Record<string, unknown>): Record<string, unknown> {
    const fields = Object.keys(body);
    if (fields.length > 0) {
      throw invalidBody(`unknown field ${fields[0]}: this operation takes no body`);
    }
    return body;
  }
}

export const noBodyPipe = new NoBodyPipe();
