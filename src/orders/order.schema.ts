import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ORDER_STATUSES, OrderStatus } from './order-status';

/**
 * The Order of the OpenAPI document. Documentation only: responses are written by the one
 * explicit mapper (`order-json.ts`), which keeps int64 values exact; a JS `number` could not.
 * No field is required, as in the specification; fields whose value is null are left out.
 */
@ApiSchema({
  name: 'Order',
  description: 'A customer order of the store. Fields whose value is null are left out.',
})
export class OrderSchema {
  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    description: 'Unique order identifier. An exact JSON integer over the whole int64 range.',
    example: 10,
  })
  id?: number;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    description: 'Identifier of the animal in this order. An exact JSON integer (int64).',
    example: 198772,
  })
  petId?: number;

  @ApiPropertyOptional({ type: 'integer', format: 'int32', description: 'Number of units ordered' })
  quantity?: number;

  @ApiPropertyOptional({
    type: 'string',
    format: 'date-time',
    description: 'Expected or actual ship date, ISO 8601 in UTC',
    example: '2026-11-22T10:00:00.000Z',
  })
  shipDate?: string;

  @ApiPropertyOptional({ description: 'Whether the order has been fulfilled' })
  complete?: boolean;

  @ApiPropertyOptional({
    enum: ORDER_STATUSES,
    enumName: 'OrderStatus',
    description:
      "Addition to the specification's Order: where the order stands. Only a `pending` order can " +
      'be cancelled; a `shipped` one cannot.',
  })
  status?: OrderStatus;
}
