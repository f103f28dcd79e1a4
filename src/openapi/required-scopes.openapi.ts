import type { HeaderObject, OpenAPIObject, OperationObject, ResponseObject } from '@nestjs/swagger';
import { AuthErrors, insufficientScopeMessage } from '../auth/auth.errors';
import { isPublicRoute } from '../auth/public.decorator';
import { requiredScopeOf } from '../auth/scopes';
import type { ServedRoute } from '../common/http/route-table';
import { errorExample, RATE_LIMIT_HEADERS } from './api-responses.decorator';
import { routeOperations } from './route-operations';

function insufficientScopeChallenge(scope: string, required: boolean): HeaderObject {
  return {
    description:
      `\`Bearer realm="store-orders", error="insufficient_scope", scope="${scope}"\` ` +
      '(RFC 6750 §3.1), when the key lacks the scope this operation requires.',
    schema: { type: 'string' },
    required,
  };
}

/** Shows the scope one operation requires: `x-required-scopes`, its description, its 403. */
function describeOperation(operation: OperationObject, scope: string): void {
  Object.assign(operation, { 'x-required-scopes': [scope] });
  operation.description = [
    operation.description,
    `**Required scope:** \`${scope}\`. A valid key without it is answered ` +
      '`403 INSUFFICIENT_SCOPE`.',
  ]
    .filter((text) => text !== undefined && text !== '')
    .join('\n\n');

  const example = errorExample({
    ...AuthErrors.INSUFFICIENT_SCOPE,
    message: insufficientScopeMessage(scope),
  });
  const description = `The API key is valid but lacks the scope \`${scope}\` (\`INSUFFICIENT_SCOPE\`).`;
  const own = operation.responses['403'] as ResponseObject | undefined;
  if (own && !('$ref' in own)) {
    // The route answers a 403 of its own too: one response, both examples; the challenge is
    // then on some 403s only.
    own.description = `${own.description} Or: ${description}`;
    own.headers = {
      ...own.headers,
      'WWW-Authenticate': insufficientScopeChallenge(scope, false),
    };
    const media = own.content?.['application/json'];
    if (media) {
      media.examples = { ...media.examples, [AuthErrors.INSUFFICIENT_SCOPE.code]: example };
    }
    return;
  }
  const forbidden: ResponseObject = {
    description,
    headers: { ...RATE_LIMIT_HEADERS, 'WWW-Authenticate': insufficientScopeChallenge(scope, true) },
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        examples: { [AuthErrors.INSUFFICIENT_SCOPE.code]: example },
      },
    },
  };
  // Listed among the others in order of status: integer keys are enumerated in ascending order.
  operation.responses['403'] = forbidden;
}

/**
 * Shows the `@RequireScope()` of the routes in the document of their version (its paths still
 * with the version's prefix), whatever module they come from.
 */
export function describeRequiredScopes(
  document: OpenAPIObject,
  routes: readonly ServedRoute[],
  /** Undefined: the routes outside every version (the admin API's). */
  version: string | undefined,
): void {
  for (const { route, handler, operation } of routeOperations(document, routes, version)) {
    const scope = requiredScopeOf(handler, route.controller);
    if (scope !== undefined && !isPublicRoute(handler, route.controller)) {
      describeOperation(operation, scope);
    }
  }
}
