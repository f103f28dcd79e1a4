import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuditEventsRepository } from './audit-events.repository';
import { AuditTrail } from './audit-trail';

/**
 * The audit trail: who changed what, recorded in the transaction of each change, read back newest
 * first. Modules declare the actions they record in their own folder (`defineAuditActions`) and
 * record them through {@link AuditTrail} or, within one statement, `auditEventsOfRows`.
 */
@Module({
  providers: [
    {
      provide: AuditEventsRepository,
      inject: [DataSource],
      useFactory: (ds: DataSource) => new AuditEventsRepository(ds),
    },
    {
      provide: AuditTrail,
      inject: [AuditEventsRepository],
      useFactory: (events: AuditEventsRepository) => new AuditTrail(events),
    },
  ],
  exports: [AuditTrail],
})
export class AuditModule {}
