/** The v1 document, as it has always been served, and Swagger UI on it. */
export const OPENAPI_JSON_PATH = '/openapi.json';
export const SWAGGER_UI_PATH = '/docs';
/** Every version's document: `/openapi/v1.json`, `/openapi/v2.json` ... */
export const openApiVersionPath = (version: string): string => `/openapi/v${version}.json`;

/**
 * Where a client reads what changed: the changelog as this server serves it, relative to the
 * server's root, so that Swagger UI's link works wherever the service is deployed.
 */
export const CHANGELOG_PATH = '/changelog';
