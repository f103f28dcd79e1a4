import type { AuditQuery } from '../audit/audit-trail';
import { ApiException } from '../common/errors/api.exception';
import { AdminErrors } from '../admin-routes/admin.errors';

const PARAMETERS = ['action', 'actor', 'target', 'limit', 'cursor'] as const;

const invalidQuery = (message: string): ApiException =>
  new ApiException(AdminErrors.INVALID_QUERY, message);

/**
 * `GET /admin/v1/audit`'s query as the audit trail takes it: each parameter at most once, none
 * unknown or empty, `limit` a whole number. The trail checks the rest (action, limit's range,
 * cursor), as it does for the keys tool.
 */
export function parseAuditQuery(query: Record<string, unknown>): AuditQuery {
  const parsed: AuditQuery = {};
  for (const [name, value] of Object.entries(query)) {
    if (!(PARAMETERS as readonly string[]).includes(name)) {
      throw invalidQuery(
        `unknown query parameter ${name}: the parameters are ${PARAMETERS.join(', ')}`,
      );
    }
    if (typeof value !== 'string') throw invalidQuery(`${name} must be given once`);
    if (value === '') throw invalidQuery(`${name} needs a value`);
    if (name === 'limit') {
      if (!/^\d{1,7}$/.test(value))
        throw invalidQuery(`limit must be a whole number; got "${value}"`);
      parsed.limit = Number(value);
    } else {
      parsed[name as Exclude<(typeof PARAMETERS)[number], 'limit'>] = value;
    }
  }
  return parsed;
}
