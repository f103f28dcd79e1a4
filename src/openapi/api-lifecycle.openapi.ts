import type { HeaderObject, OpenAPIObject, OperationObject, ResponseObject } from '@nestjs/swagger';
import { lifecycleOf, type RouteDeprecation, type RouteLifecycle } from '../common/api-lifecycle';
import { CommonErrors } from '../common/errors/error-code';
import type { ServedRoute } from '../common/http/route-table';
import { errorExample, RATE_LIMIT_HEADERS } from './api-responses.decorator';
import { routeOperations } from './route-operations';

const string = { type: 'string' } as const;

function deprecationHeaders(deprecation: RouteDeprecation): Record<string, HeaderObject> {
  return {
    Deprecation: {
      description:
        `This operation is deprecated (RFC 9745): \`${deprecation.deprecationHeader}\`, ` +
        `the Unix time of ${deprecation.since}, midnight UTC.`,
      schema: { ...string, pattern: '^@[0-9]+$', example: deprecation.deprecationHeader },
      required: true,
    },
    Sunset: {
      description:
        `When this operation stops working (RFC 8594): \`${deprecation.sunsetHeader}\`; ` +
        'from then on it answers `410 GONE`.',
      schema: { ...string, example: deprecation.sunsetHeader },
      required: true,
    },
  };
}

/** A `Link` header's documentation, the deprecation's link added to any the operation has. */
function withDeprecationLink(
  documented: HeaderObject | undefined,
  linkHeader: string,
): HeaderObject {
  const ours = `the migration notes: \`${linkHeader}\` (RFC 9745)`;
  return documented
    ? { ...documented, description: `${documented.description ?? ''} Beside it, ${ours}.` }
    : { description: `Links to ${ours}.`, schema: string, required: true };
}

function sunsetDescription(deprecation: RouteDeprecation): string {
  const notes = deprecation.link ? ` Migration notes: ${deprecation.link}` : '';
  return (
    `**Deprecated** since ${deprecation.since}. **Sunset: ${deprecation.sunset}**: from that ` +
    `day (midnight UTC) on, it answers \`410 GONE\`.${notes}`
  );
}

/** Shows one route's markers on its operation. */
function describeOperation(operation: OperationObject, lifecycle: RouteLifecycle): void {
  const { stability, deprecation } = lifecycle;
  const headers: Record<string, HeaderObject> = {};
  if (stability) {
    Object.assign(operation, { 'x-stability': stability });
    headers['X-API-Stability'] = {
      description: `This operation is ${stability}: it may change, or go, without a deprecation.`,
      schema: { ...string, enum: [stability] },
      required: true,
    };
  }
  if (deprecation) {
    operation.deprecated = true;
    operation.description = [operation.description, sunsetDescription(deprecation)]
      .filter((text) => text !== undefined && text !== '')
      .join('\n\n');
    Object.assign(headers, deprecationHeaders(deprecation));
    const gone: ResponseObject = {
      description: `The operation was retired on ${deprecation.sunset}, its sunset date.`,
      headers: { ...RATE_LIMIT_HEADERS },
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/Error' },
          examples: { [CommonErrors.GONE.code]: errorExample(CommonErrors.GONE) },
        },
      },
    };
    operation.responses['410'] = gone;
  }
  for (const response of Object.values(operation.responses)) {
    if (!response || '$ref' in response) continue;
    response.headers = { ...response.headers, ...headers };
    const link = deprecation?.linkHeader;
    if (link !== undefined) {
      const documented = response.headers.Link as (typeof response.headers)[string] | undefined;
      response.headers.Link = withDeprecationLink(
        documented && !('$ref' in documented) ? documented : undefined,
        link,
      );
    }
  }
}

/**
 * Shows the `@Stability` and `@Deprecated` markers of the routes in the document of their
 * version (its paths still with the version's prefix): `x-stability`; `deprecated: true` with the
 * sunset in the description and a 410 response; and the headers every response then carries.
 */
export function describeApiLifecycle(
  document: OpenAPIObject,
  routes: readonly ServedRoute[],
  version: string,
): void {
  for (const { route, operation } of routeOperations(document, routes, version)) {
    const lifecycle = lifecycleOf(route.controller, route.handler);
    if (lifecycle) describeOperation(operation, lifecycle);
  }
}
