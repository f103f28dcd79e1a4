import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { configureApp, createHttpAdapter } from '../app.setup';
import { RouteTable } from '../common/http/route-table';
import { CommonErrors, type ErrorCode, registeredErrorCodes } from '../common/errors/error-code';
import { errorCodeDescription } from '../openapi/document-text';
import { BEARER_SCHEME, documentedCodes } from '../openapi/openapi-documents';
import { SWAGGER_UI_PATH } from '../openapi/openapi-paths';
import { describeRequiredScopes } from '../openapi/required-scopes.openapi';
import { keepAdminBody } from '../admin-routes/admin-body.pipe';
import { ADMIN_API } from '../admin-routes/admin.errors';
import { AdminAppModule } from './admin.module';

/** Where the admin listener serves its document. */
export const ADMIN_OPENAPI_PATH = '/openapi/admin.json';

const DESCRIPTION = `Key administration, the audit trail and webhook endpoints of the Store Orders
Service: served only on the admin listener (\`ADMIN_HOST:ADMIN_PORT\`), never on the API's port. The
keys and audit operations need a key with the scope \`keys:admin\`, the webhooks operations one with
\`webhooks:admin\` (each granted only by name: \`npm run keys -- create ... --scopes keys:admin\`);
every operation counts against the key's plan, in the same windows as its requests to the API.
Bodies are JSON (at most 16 KiB); a body that is not valid is \`400 INVALID_BODY\`, naming the
field. A key's id in a path is the whole UUID. Errors are \`{code, message, status}\`.`;

/** The admin API's document, with each operation's required scope (`keys:admin`, `webhooks:admin`). */
function adminDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Store Orders Service: admin API')
    .setVersion('1.0.0')
    .setDescription(DESCRIPTION)
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'API key with keys:admin' },
      BEARER_SCHEME,
    )
    .addSecurityRequirements(BEARER_SCHEME)
    .build();
  const document = SwaggerModule.createDocument(app, config);
  describeRequiredScopes(document, app.get(RouteTable).routes, undefined);
  const errorSchema = document.components?.schemas?.Error;
  if (errorSchema && !('$ref' in errorSchema)) {
    errorSchema.additionalProperties = false;
    // The codes its operations document, and those of the router and the HTTP layer (no
    // route of it is deprecated: never GONE). The API's documents list none of its own.
    const documented = documentedCodes(document);
    const listed = [
      ...registeredErrorCodes(ADMIN_API),
      ...registeredErrorCodes().filter(({ code }) => documented.has(code)),
      ...Object.values<ErrorCode>(CommonErrors).filter((e) => e !== CommonErrors.GONE),
    ];
    const byCode = new Map(listed.sort((a, b) => a.status - b.status).map((e) => [e.code, e]));
    const code = errorSchema.properties?.code;
    if (code && !('$ref' in code)) {
      code.description = errorCodeDescription([...byCode.values()]);
    }
  }
  return document;
}

/** `/openapi/admin.json` and Swagger UI at `/docs`, on the admin listener only. */
function setupAdminOpenApi(app: INestApplication): void {
  const document = adminDocument(app);
  app.getHttpAdapter().get(ADMIN_OPENAPI_PATH, (_req: Request, res: Response) => {
    res.json(document);
  });
  const routes = app.get(RouteTable);
  for (const path of [ADMIN_OPENAPI_PATH, SWAGGER_UI_PATH]) routes.addMounted('GET', path);
  SwaggerModule.setup(SWAGGER_UI_PATH, app, document, {
    jsonDocumentUrl: ADMIN_OPENAPI_PATH,
    raw: false,
    customSiteTitle: 'Store Orders Service: admin API',
    swaggerOptions: { displayOperationId: true, tryItOutEnabled: false, url: ADMIN_OPENAPI_PATH },
  });
}

/**
 * The admin application, created and configured as the service serves it
 * (`createAdminListener()`) and as the tests do: the API's HTTP setup, with request bodies kept
 * for the handlers and its own document, beside the API's application `api` (its database,
 * rate-limit storage and metrics). The caller listens on ADMIN_HOST:ADMIN_PORT, and closes it
 * before `api`.
 */
export async function createAdminApp(
  api: INestApplicationContext,
  nestOptions: { logger?: false; bufferLogs?: boolean } = {},
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AdminAppModule.forRoot(api),
    createHttpAdapter(),
    { bodyParser: false, abortOnError: false, ...nestOptions },
  );
  try {
    configureApp(app, { keepBody: keepAdminBody, documents: setupAdminOpenApi, neverShed: true });
    await app.init();
    return app;
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
}
