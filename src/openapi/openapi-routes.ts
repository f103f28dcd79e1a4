import type { INestApplication } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RouteTable } from '../common/http/route-table';
import { httpSettings, type HttpSettings } from '../common/http/http.settings';
import { openApiSettings, type OpenApiSettings } from './openapi.settings';
import { SWAGGER_UI_TITLE, swaggerUiDefinitionName } from './document-text';
import { createOpenApiDocuments, declaredDocuments } from './openapi-documents';
import {
  CHANGELOG_PATH,
  OPENAPI_JSON_PATH,
  openApiVersionPath,
  SWAGGER_UI_PATH,
} from './openapi-paths';
import { selfServerUrl } from './server-url';

/** The repository's CHANGELOG.md, beside `src/` and `dist/` (the image copies it there too). */
const CHANGELOG_FILE = join(__dirname, '..', '..', 'CHANGELOG.md');

/**
 * Serves each version's document at `/openapi/vN.json`, v1's also at `/openapi.json`, and Swagger
 * UI at `/docs` offering them all, everything public. Without PUBLIC_BASE_URL, the first server is
 * this server itself, as the client reached it, so that "Try it out" calls the right address locally (and behind a
 * proxy, with TRUST_PROXY).
 */
export function setupOpenApi(app: INestApplication): void {
  const settings = app.get<OpenApiSettings>(openApiSettings.KEY);
  const documents = createOpenApiDocuments(app, settings);
  const declared = declaredDocuments(app.get(DiscoveryService));
  // Under TRUST_PROXY, Express reads the scheme from X-Forwarded-Proto.
  const dependsOn =
    app.get<HttpSettings>(httpSettings.KEY).TRUST_PROXY === undefined
      ? 'Host'
      : 'Host, X-Forwarded-Proto';
  const forRequest = (
    req: Request,
    res: Response,
    doc: OpenAPIObject,
    version: string,
  ): OpenAPIObject => {
    if (settings.PUBLIC_BASE_URL !== undefined) return doc;
    // The document differs by these request headers: a cache must not serve one for another.
    res.vary(dependsOn);
    const self = {
      url: selfServerUrl(req.protocol, req.get('host'), version),
      description: 'This server',
    };
    return { ...doc, servers: [self, ...(doc.servers ?? [])] };
  };

  const http = app.getHttpAdapter();
  const routes = app.get(RouteTable);
  for (const [version, document] of documents) {
    http.get(openApiVersionPath(version), (req: Request, res: Response) => {
      res.json(forRequest(req, res, document, version));
    });
    routes.addMounted('GET', openApiVersionPath(version));
  }
  for (const path of [OPENAPI_JSON_PATH, SWAGGER_UI_PATH]) routes.addMounted('GET', path);
  // Public like the documents that link to it. An install without the file serves none (404).
  if (existsSync(CHANGELOG_FILE)) {
    const changelog = readFileSync(CHANGELOG_FILE, 'utf8');
    http.get(CHANGELOG_PATH, (_req: Request, res: Response) => {
      res.type('text/markdown; charset=utf-8').send(changelog);
    });
    routes.addMounted('GET', CHANGELOG_PATH);
  }

  const v1 = documents.get('1');
  if (!v1) return;
  SwaggerModule.setup(SWAGGER_UI_PATH, app, v1, {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    customSiteTitle: SWAGGER_UI_TITLE,
    // Every version's document, v1 first: "Select a definition" switches between them.
    explorer: true,
    swaggerOptions: {
      displayOperationId: true,
      tryItOutEnabled: false,
      urls: [...documents.keys()].map((version) => ({
        url: openApiVersionPath(version),
        name: swaggerUiDefinitionName(version, declared.get(version)?.version),
      })),
    },
    patchDocumentOnRequest: (req: unknown, res: unknown, doc: OpenAPIObject): OpenAPIObject =>
      forRequest(req as Request, res as Response, doc, '1'),
  });
}
