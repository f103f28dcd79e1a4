import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ErrorCode } from './error-code';

/** The Error of the OpenAPI document: the body of every error response (see ApiException). */
@ApiSchema({ name: 'Error', description: 'The body of every error response.' })
export class ErrorSchema {
  @ApiProperty({
    description: `Machine-readable error code: ${Object.values(ErrorCode).join(', ')}`,
    example: ErrorCode.ORDER_NOT_FOUND,
  })
  code!: string;

  @ApiProperty({ description: 'Human-readable description of the error' })
  message!: string;

  @ApiProperty({ type: 'integer', description: 'The HTTP status code', example: 404 })
  status!: number;
}
