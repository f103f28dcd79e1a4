import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { OrderSchema } from '../order.schema';

/** The page of `GET /v2/store/orders` in the OpenAPI document (written by order-page.ts). */
@ApiSchema({
  name: 'OrderPage',
  description:
    'One page of orders. `nextCursor` is present exactly when `hasMore` is true; pass it as ' +
    '`cursor`, with the same filters and sort, for the next page. A page holds at most `limit` ' +
    'orders, and may hold fewer, even none, while `hasMore` is true: each page examines a ' +
    'bounded number of orders, and where few match, it ends short and the next continues the ' +
    'scan. Walk until `hasMore` is false.',
})
export class OrderPageSchema {
  @ApiProperty({ type: [OrderSchema], description: 'The orders of this page, in sort order.' })
  data!: OrderSchema[];

  @ApiProperty({
    description:
      'Whether more orders may follow this page (a short or empty page does not say no).',
  })
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
