import type { NextFunction, Request, Response } from 'express';
import { ApiException } from '../common/errors/api.exception';
import { CommonErrors } from '../common/errors/error-code';

/**
 * What Swagger UI's page at `/docs` loads, relative to it: the page itself (`/docs`, `/docs/`),
 * its stylesheet, scripts and icons from swagger-ui-dist, and the initialiser @nestjs/swagger
 * writes with the document's address (the HTML of `buildSwaggerHTML` names each of them).
 */
const SWAGGER_UI_FILES: ReadonlySet<string> = new Set([
  '/',
  '/swagger-ui.css',
  '/swagger-ui-bundle.js',
  '/swagger-ui-standalone-preset.js',
  '/swagger-ui-init.js',
  '/favicon-32x32.png',
  '/favicon-16x16.png',
]);

/**
 * Mounted at `/docs`, before Swagger UI: any other path under it is 404 `NOT_FOUND`, as an unknown
 * path anywhere. @nestjs/swagger serves the whole swagger-ui-dist folder there, whose
 * `package.json`, README, licences, source maps and unused bundles would otherwise tell anyone
 * which Swagger UI this is, and serve nothing the page needs. Compared as requested, undecoded:
 * a path spelled any other way is no file of the list.
 */
export function onlySwaggerUiFiles(req: Request, _res: Response, next: NextFunction): void {
  // Below the mount point, `req.path` is what follows `/docs` ('/' for the page itself).
  if (SWAGGER_UI_FILES.has(req.path)) next();
  else next(new ApiException(CommonErrors.NOT_FOUND));
}
