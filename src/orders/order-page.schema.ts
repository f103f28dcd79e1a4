import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { OrderSchema } from './order.schema';

/** The page of `GET /v2/store/orders` in the OpenAPI document (written by order-page.ts). */
@ApiSchema({
  name: 'OrderPage',
  description:
    'One page of orders. `nextCursor` is present exactly when `hasMore` is true; pass it as ' +
    '`cursor`, with the same filters and sort, for the next page.',
})
export class OrderPageSchema {
  @ApiProperty({ type: [OrderSchema], description: 'The orders of this page, in sort order.' })
  data!: OrderSchema[];

  @ApiProperty({ description: 'Whether more orders follow this page.' })
  hasMore!: boolean;

  @ApiPropertyOptional({
    description:
      'Opaque cursor of the next page (base64url); present exactly when `hasMore` is true. ' +
      'It does not expire.',
    pattern: '^[A-Za-z0-9_-]+$',
    example: 'WzEsImxEMFFqMzEyUDMtWG5sOGYiLCIxMDAiLCJtSldJbFhraURPMk9QU1gyIl0',
  })
  nextCursor?: string;
}
