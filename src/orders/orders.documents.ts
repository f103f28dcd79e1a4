import type { ErrorCode } from '../common/errors/error-code';
import type { ApiVersionDocumentDefinition } from '../openapi/api-version-document.decorator';
import { commonSections } from '../openapi/document-text';

const V1_DESCRIPTION = (
  codes: readonly ErrorCode[],
): string => `Lists a store's customer orders and cancels those not yet shipped.

${commonSections(codes)}

## Version 2
Filtering and pagination of the list come with v2 (\`/openapi/v2.json\`), beside this version,
which stays as it is. Every answer of \`listOrders\` names it:
\`Link: </v2/store/orders>; rel="successor-version"\` (RFC 5829).`;

const V2_DESCRIPTION = (
  codes: readonly ErrorCode[],
): string => `Lists a store's customer orders, filtered, sorted and one page at a time,
and cancels those not yet shipped. Version 2 of the API; version 1 (\`/openapi/v1.json\`) stays
as it was, and counts against the same rate-limit windows of a key.

## Pages
\`GET /store/orders\` answers \`{data, hasMore, nextCursor}\`. While \`hasMore\` is true, pass
\`nextCursor\` as \`cursor\` with the same filters and sort (the limit may change) for the next
page, or follow the response's \`Link: <…>; rel="next"\` (RFC 8288). Pages are found by keyset,
never by offset: page 10,000 costs what page 1 costs. Walking all pages visits exactly once, in
sort order, every order that matched throughout the walk and whose sort key did not change,
whatever is placed, cancelled or shipped meanwhile. Cursors are opaque and do not expire; one
reused with other filters or another sort, or altered, is \`400 INVALID_CURSOR\`. Parameters are
strict: an unknown, repeated, empty or out-of-rule one is \`400 INVALID_QUERY\`, naming it.

${commonSections(codes)}`;

/** Version 1 of the API, the specification's: declared by OrdersController (@ApiVersionDocument). */
export const V1_DOCUMENT: ApiVersionDocumentDefinition = {
  apiVersion: '1',
  title: 'Petstore API',
  version: '1.0.0',
  description: V1_DESCRIPTION,
};

/** Version 2: filtering and pagination of the list; declared by OrdersV2Controller. */
export const V2_DOCUMENT: ApiVersionDocumentDefinition = {
  apiVersion: '2',
  title: 'Petstore API',
  version: '2.0.0',
  description: V2_DESCRIPTION,
};
