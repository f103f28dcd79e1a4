import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/**
 * The Error of the OpenAPI document: the body of every error response (see ApiException). The
 * list of codes in `code`'s description is filled in from every registered code when the
 * document is built (openapi-documents.ts).
 */
@ApiSchema({ name: 'Error', description: 'The body of every error response.' })
export class ErrorSchema {
  @ApiProperty({ description: 'Machine-readable error code', example: 'ORDER_NOT_FOUND' })
  code!: string;

  @ApiProperty({ description: 'Human-readable description of the error' })
  message!: string;

  @ApiProperty({ type: 'integer', description: 'The HTTP status code', example: 404 })
  status!: number;
}
