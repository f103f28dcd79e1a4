import { DataSource, IsNull } from 'typeorm';
import { limitsOf, Plan, planLimitsProblem, RateLimits } from '../plans/plans';
import { ApiKey } from './api-key.entity';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key';

export interface IssueKeyRequest {
  plan: Plan;
  name?: string;
  /** Enterprise only (and required there). */
  limits?: RateLimits;
}

/** A newly issued key: the only moment its plaintext exists outside the client. */
export interface IssuedKey {
  id: string;
  key: string;
  name: string | null;
  prefix: string;
  plan: Plan;
  limits: RateLimits;
  createdAt: Date;
}

/** What a request's key resolves to; on the request as `req.auth`. */
export interface ActiveKey {
  keyId: string;
  plan: Plan;
  limits: RateLimits;
  bannedUntil: Date | null;
}

export type KeySummary = Omit<ApiKey, 'keyHash'>;

export class InvalidKeyRequestError extends Error {}

/**
 * API keys in the database: issue, list, revoke, ban. Shared by the server (through
 * {@link ApiKeyAuthenticator}) and the `keys` command-line tool, so both obey the same rules.
 */
export class ApiKeyStore {
  constructor(private readonly dataSource: DataSource) {}

  private get keys() {
    return this.dataSource.getRepository(ApiKey);
  }

  async issue(request: IssueKeyRequest): Promise<IssuedKey> {
    const problem = planLimitsProblem(request.plan, request.limits);
    if (problem !== undefined) throw new InvalidKeyRequestError(problem);
    const { limits } = request;
    const key = generateApiKey();
    const row = await this.keys.save(
      this.keys.create({
        name: request.name ?? null,
        prefix: displayPrefix(key),
        keyHash: hashApiKey(key),
        plan: request.plan,
        perMinute: limits?.perMinute ?? null,
        perDay: limits?.perDay ?? null,
      }),
    );
    return {
      id: row.id,
      key,
      name: row.name,
      prefix: row.prefix,
      plan: row.plan,
      limits: limitsOf(row),
      createdAt: row.createdAt,
    };
  }

  list(): Promise<KeySummary[]> {
    return this.keys.find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** Whether a key with this id existed (revoking twice is harmless). */
  async revoke(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    await this.keys.update({ id, revokedAt: IsNull() }, { revokedAt: () => 'now()' });
    return this.keys.existsBy({ id });
  }

  async unban(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const { affected } = await this.keys.update({ id }, { bannedUntil: null });
    return (affected ?? 0) > 0;
  }

  async ban(id: string, until: Date): Promise<void> {
    await this.keys.update({ id }, { bannedUntil: until });
  }

  /** The key with this hash, unless it is unknown or revoked. */
  async findActive(keyHash: string): Promise<ActiveKey | null> {
    const row = await this.keys.findOne({
      select: { id: true, plan: true, perMinute: true, perDay: true, bannedUntil: true },
      where: { keyHash, revokedAt: IsNull() },
    });
    if (!row) return null;
    return { keyId: row.id, plan: row.plan, limits: limitsOf(row), bannedUntil: row.bannedUntil };
  }

  async touch(id: string): Promise<void> {
    await this.keys.update({ id }, { lastUsedAt: () => 'now()' });
  }
}

function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
