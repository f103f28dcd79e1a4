import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { AUDIT_ACTION_NAMES } from '../audit/audit-actions';

/** An Event of the audit trail. */
export class AdminAuditEventSchema {
  @ApiProperty({ example: '42' })
  id!: string;
  @ApiProperty({ type: 'string', format: 'date-time' })
  at!: string;
  @ApiProperty({ description: '`key:<id>` or `cli:<OS user>`.', example: 'cli:alice' })
  actor!: string;
  @ApiProperty({ enum: AUDIT_ACTION_NAMES })
  action!: string;
  @ApiProperty({ description: '`key:<id>` or `order:<id>`.', example: 'order:4711' })
  target!: string;
  @ApiPropertyOptional({ description: 'The id of the request that made the change (over HTTP).' })
  requestId?: string;
}

export class AdminAuditPageSchema {
  @ApiProperty({ type: [AdminAuditEventSchema] })
  data!: AdminAuditEventSchema[];
  @ApiProperty()
  hasMore!: boolean;
  @ApiPropertyOptional({
    description: "Present exactly when `hasMore` is: the next page's `cursor`.",
  })
  nextCursor?: string;
}
