import { loadDeclarations } from '../../config/declarations';
import { withGeneratedSection } from '../../config/generated-section';
import {
  ADMIN_API,
  CommonErrors,
  type DocumentedErrorCode,
  documentedErrorCodes,
  type ErrorCode,
} from './error-code';

function table(codes: DocumentedErrorCode[]): string {
  return [
    '| status | code | when |',
    '|---|---|---|',
    ...codes.map(({ error, when }) => `| ${error.status} | \`${error.code}\` | ${when} |`),
  ].join('\n');
}

/**
 * docs/api.md's tables of error codes, from every module's declarations (`<module>.errors.ts`,
 * `defineErrorCodes`): the API's, then the admin API's own.
 */
export function errorCodeTables(): string {
  loadDeclarations('errors');
  // No admin route is deprecated: never GONE.
  const httpLayer = Object.values<ErrorCode>(CommonErrors)
    .filter((error) => error !== CommonErrors.GONE)
    .map(({ code }) => `\`${code}\``)
    .join(', ');
  return [
    '### The API',
    '',
    table(documentedErrorCodes()),
    '',
    '### The admin API',
    '',
    `Its own codes; besides them it answers the HTTP layer's (${httpLayer}) and, as its`,
    "document lists them per operation, the API key's and the limits'.",
    '',
    table(documentedErrorCodes(ADMIN_API)),
  ].join('\n');
}

/** docs/api.md with its tables of error codes as the declarations say now. */
export function withErrorCodeTables(document: string): string {
  return withGeneratedSection(document, 'error-codes', errorCodeTables());
}
