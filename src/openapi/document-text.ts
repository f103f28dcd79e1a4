import type { ErrorCode } from '../common/errors/error-code';
import { PLAN_LIMITS } from '../plans/plans';
import { CHANGELOG_PATH } from './openapi-paths';

/**
 * The words of the OpenAPI documents and of Swagger UI that no decorator gives: the sections
 * every version's description has, the security scheme's and the Error code's descriptions, and
 * Swagger UI's titles. Building the documents is openapi-documents.ts; serving them,
 * openapi-routes.ts.
 */

const CHANGELOG_LINK = `[CHANGELOG](${CHANGELOG_PATH})`;

const thousands = (n: number): string => n.toLocaleString('en-US');

/** Authentication, plans and errors: the same in every version (each document's description has them). */
export const commonSections = (codes: readonly ErrorCode[]): string => `## Authentication
Every operation needs an API key, sent as a bearer token: \`Authorization: Bearer <API_KEY>\`
(keys look like \`sk_\` followed by 43 base62 characters and are issued by the operator).
A missing or invalid key is answered \`401 UNAUTHORIZED\` with a \`WWW-Authenticate\` challenge.

A key may be restricted to scopes (\`orders:read\`, \`orders:cancel\` ...). An operation that
needs one names it in its description and in \`x-required-scopes\`; a valid key without it is
answered \`403 INSUFFICIENT_SCOPE\` with \`WWW-Authenticate: Bearer realm="store-orders",
error="insufficient_scope", scope="<scope>"\`, and the request counts against the key's limits.

## Plans and rate limits
| plan | per minute | per day |
|---|---|---|
${Object.entries(PLAN_LIMITS)
  .map(([plan, l]) => `| ${plan} | ${thousands(l.perMinute)} | ${thousands(l.perDay)} |`)
  .join('\n')}
| enterprise | set per key | set per key |

A request is admitted only if both its minute and its day window have room; a refused request
consumes nothing. Requests without a valid key are limited per client IP with the free plan's
numbers. Every response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\` (Unix seconds) for the window that binds most. Over the limit: \`429\` with
\`Retry-After\` in seconds; wait, and back off exponentially. A key that keeps sending after its
429s is banned for a while (\`429 API_KEY_BANNED\`).

## Errors
Every error is \`application/json\` with exactly \`{code, message, status}\`:
${codes.map((error) => `\`${error.code}\` (${error.status})`).join(', ')}.

## Stability, deprecation and changes
An operation marked \`x-stability\` (\`experimental\` or \`beta\`) may still change or go
without notice; its responses carry \`X-API-Stability\`. A \`deprecated\` operation says its
sunset date, and its responses carry \`Deprecation\` (RFC 9745), \`Sunset\` (RFC 8594) and
\`Link: <migration notes>; rel="deprecation"\` when there are notes; it keeps working for at
least six months after it is deprecated, and from its sunset date on answers \`410 GONE\`.
Every release of the API, dated, newest first (what it added, changed, deprecated, removed or
fixed), is in the service's changelog: ${CHANGELOG_LINK}.

## Additions to the specification
- \`Order.status\` (\`pending\`, \`shipped\`, \`cancelled\`): without it a client cannot tell which
  orders can be cancelled.
- int64 values (\`id\`, \`petId\`) are exact JSON integers over the whole int64 range: a
  JavaScript client needs a big-integer-aware JSON parser for values beyond 2^53.`;

/** The bearer security scheme's description. */
export const BEARER_DESCRIPTION = 'An API key: `Authorization: Bearer sk_...`';

/** The Error schema's `code`: the codes a version's operations can answer. */
export const errorCodeDescription = (codes: readonly ErrorCode[]): string =>
  `Machine-readable error code: ${codes.map((e) => e.code).join(', ')}`;

/** Swagger UI's page title. */
export const SWAGGER_UI_TITLE = 'Petstore API: Store Orders';

/** A version's name in Swagger UI's "Select a definition": `v1 (1.0.0)`. */
export const swaggerUiDefinitionName = (apiVersion: string, documentVersion = ''): string =>
  `v${apiVersion} (${documentVersion})`;
