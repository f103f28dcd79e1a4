import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { AUDIT_ACTIONS } from '../audit/audit-event';

/** An Event of the audit trail (contract §10). */
export class AdminAuditEventSchema {
  @ApiProperty({ example: '42' })
  id!: string;
  @ApiProperty({ type: 'string', format: 'date-time' })
  at!: string;
  @ApiProperty({ description: '`key:<id>` or `cli:<OS user>`.', example: 'cli:alice' })
  actor!: string;
  @ApiProperty({ enum: AUDIT_ACTIONS })
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
