import { DiscoveryService } from '@nestjs/core';
import type { ErrorCode } from '../common/errors/error-code';

/** What a version's document says of itself. Its tags and operations come from the controllers. */
export interface ApiDocumentInfo {
  title: string;
  version: string;
  /**
   * Built with the document, so that it can list the error codes of the running modules: those
   * this version's operations document, and those no version's operations name (the router's,
   * a module's that only throws them), but not codes only another version answers.
   */
  description: (codes: readonly ErrorCode[]) => string;
}

/** A version's document as a controller of that version declares it. */
export interface ApiVersionDocumentDefinition extends ApiDocumentInfo {
  /** The API version it documents: `'3'` for the routes under `/v3`, served at /openapi/v3.json. */
  apiVersion: string;
}

/**
 * Declares the OpenAPI document of an API version, on a controller of the module that brings
 * the version (v1 and v2: the orders controllers). The documents are built from these
 * declarations (`createOpenApiDocuments`): a new version is its controllers and this decorator,
 * in its module's folder. A version served with no declaration stops the application at start;
 * two different declarations of one version too.
 *
 * ```ts
 * @ApiVersionDocument({ apiVersion: '3', title: 'Widgets API', version: '3.0.0', description })
 * @Controller({ path: 'widgets', version: '3' })
 * export class WidgetsV3Controller {}
 * ```
 */
export const ApiVersionDocument = DiscoveryService.createDecorator<ApiVersionDocumentDefinition>();
