import { applyDecorators } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { ApiTags } from '@nestjs/swagger';

/** A tag of the OpenAPI document, as its controller declares it. */
export interface ApiTagDefinition {
  name: string;
  description: string;
}

/** The discoverable half of {@link ApiTag}: how the document finds the tags' descriptions. */
export const ApiTagDefinition = DiscoveryService.createDecorator<ApiTagDefinition>();

/**
 * The controller's OpenAPI tag, with its description: its operations are grouped under it, and
 * the document of each version lists it (with the description) when it has operations there.
 */
export const ApiTag = (tag: ApiTagDefinition): ClassDecorator =>
  applyDecorators(ApiTags(tag.name), ApiTagDefinition(tag));
