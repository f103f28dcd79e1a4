import DataLoader from 'dataloader';
import { DataSource, EntityManager, In, IsNull } from 'typeorm';
import { limitsOf, Plan, planLimitsProblem, RateLimits } from '../plans/plans';
import { ApiKey } from './api-key.entity';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key';
import { scopesOf, scopesProblem, storedScopes } from './scopes';

export interface IssueKeyRequest {
  plan: Plan;
  name?: string;
  /** Enterprise only (and required there). */
  limits?: RateLimits;
  /** When the key stops working; never when absent. Must be in the future. */
  expiresAt?: Date;
  /** Known scopes, or `*`; absent: every scope but `keys:admin`. */
  scopes?: readonly string[];
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
  expiresAt: Date | null;
  familyId: string;
  scopes: readonly string[];
}

/** What a request's key resolves to; on the request as `req.auth`. */
export interface ActiveKey {
  keyId: string;
  /** The rotation family: what the rate limiter counts against and a ban applies to. */
  familyId: string;
  plan: Plan;
  limits: RateLimits;
  bannedUntil: Date | null;
  /** Compared with the clock on every use: a cached key is never honoured past it. */
  expiresAt: Date | null;
  /** What the key may do (`*`: every scope but `keys:admin`): cached with it, like the rest. */
  scopes: readonly string[];
}

export type KeySummary = Omit<ApiKey, 'keyHash'>;

/** A rotation: the new key, and the old one with the end of its grace period as its expiry. */
export interface Rotation {
  issued: IssuedKey;
  previous: KeySummary;
}

export class InvalidKeyRequestError extends Error {}

/** A rotation of a revoked key: there is nothing left to replace (the keys tool's usage error). */
export class RevokedKeyError extends InvalidKeyRequestError {
  constructor(readonly id: string) {
    super(`key ${id} is revoked: issue a new one with create`);
  }
}

/** No key has this id (or id prefix). */
export class KeyNotFoundError extends Error {
  constructor(readonly ref: string) {
    super(`No key with id ${ref}`);
  }
}

/** A short id that is the prefix of more than one key's id. */
export class AmbiguousKeyIdError extends Error {
  constructor(
    readonly ref: string,
    readonly ids: string[],
  ) {
    super(`The id prefix ${ref} matches more than one key (${ids.join(', ')}): give more of it`);
  }
}

/** Characters of an id prefix accepted in place of the id: enough to rule out a slip. */
export const MIN_ID_PREFIX_LENGTH = 4;

/** The id of the key's rotation family: the id of the first key, from which the others descend. */
export function familyOf(key: Pick<ApiKey, 'id' | 'familyId'>): string {
  return key.familyId ?? key.id;
}

/** Whether the key's expiry (or the end of its rotation grace period) has passed. */
export function isExpired(key: Pick<ActiveKey, 'expiresAt'>, now = Date.now()): boolean {
  return key.expiresAt !== null && key.expiresAt.getTime() <= now;
}

/**
 * API keys in the database (the `api_keys` table, through TypeORM's entity): issue, list, revoke,
 * ban. Shared by the server (through {@link ApiKeyAuthenticator}) and the `keys` command-line
 * tool, so both obey the same rules. A method that takes an EntityManager runs in that
 * transaction ({@link transaction}), or in one of its own when given none.
 */
export class ApiKeysRepository {
  /**
   * Lookups and last-use writes asked for in one turn of the event loop (every request read from
   * the sockets in that turn) go to the database as one statement: with many distinct keys, the
   * key cache's misses cost one query per turn instead of one per key. Measured by `npm run bench`
   * (many keys).
   */
  private readonly activeKeys = new DataLoader<string, ActiveKey | null>(
    (hashes) => this.findActiveBatch(hashes),
    { cache: false, batchScheduleFn: nextTurn, maxBatchSize: MAX_BATCH },
  );
  private readonly lastUses = new DataLoader<string, null>((ids) => this.touchBatch(ids), {
    cache: false,
    batchScheduleFn: nextTurn,
    maxBatchSize: MAX_BATCH,
  });

  constructor(private readonly dataSource: DataSource) {}

  private get keys() {
    return this.dataSource.getRepository(ApiKey);
  }

  /** Runs `work` in a transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** Issues a key (in the transaction of `manager`, when given). */
  async issue(
    request: IssueKeyRequest,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<IssuedKey> {
    const problem = planLimitsProblem(request.plan, request.limits);
    if (problem !== undefined) throw new InvalidKeyRequestError(problem);
    const scopesWrong = request.scopes && scopesProblem(request.scopes);
    if (scopesWrong) throw new InvalidKeyRequestError(scopesWrong);
    const { limits } = request;
    assertFuture(request.expiresAt);
    return this.insert(manager, {
      familyId: null,
      name: request.name ?? null,
      plan: request.plan,
      perMinute: limits?.perMinute ?? null,
      perDay: limits?.perDay ?? null,
      expiresAt: request.expiresAt ?? null,
      scopes: storedScopes(request.scopes),
    });
  }

  /**
   * Issues a replacement for a key: same name, plan, limits and scopes, same family (so the two
   * share one rate-limit budget and one ban), and ends the old key's life `graceMs` from now
   * (sooner if it already expires sooner). One transaction, the old row locked: two rotations
   * cannot interleave.
   */
  async rotate(
    ref: string,
    graceMs: number,
    expiresAt?: Date,
    /** The transaction to rotate in (a new one when absent). */
    within?: EntityManager,
  ): Promise<Rotation> {
    assertFuture(expiresAt);
    return inTransaction(this.dataSource, within, async (manager) => {
      const { id } = await this.find(ref, manager);
      const old = await manager.getRepository(ApiKey).findOne({
        where: { id },
        lock: { mode: 'pessimistic_write' },
      });
      if (!old) throw new KeyNotFoundError(ref);
      if (old.revokedAt) {
        throw new RevokedKeyError(id);
      }
      const issued = await this.insert(manager, {
        familyId: familyOf(old),
        name: old.name,
        plan: old.plan,
        perMinute: old.perMinute,
        perDay: old.perDay,
        expiresAt: expiresAt ?? null,
        scopes: old.scopes,
        // A rotation does not lift a ban: the family is banned, whichever key it sends.
        bannedUntil: old.bannedUntil,
      });
      await manager
        .createQueryBuilder()
        .update(ApiKey)
        .set({
          expiresAt: () =>
            `LEAST(COALESCE("expires_at", 'infinity'), now() + :graceMs * interval '1 millisecond')`,
        })
        .where({ id })
        .setParameters({ graceMs })
        .execute();
      return { issued, previous: await this.find(id, manager) };
    });
  }

  private async insert(
    manager: EntityManager,
    row: Omit<
      KeySummary,
      'id' | 'prefix' | 'createdAt' | 'revokedAt' | 'lastUsedAt' | 'bannedUntil'
    > &
      Partial<Pick<KeySummary, 'bannedUntil'>>,
  ): Promise<IssuedKey> {
    const keys = manager.getRepository(ApiKey);
    const key = generateApiKey();
    const saved = await keys.save(
      keys.create({ ...row, prefix: displayPrefix(key), keyHash: hashApiKey(key) }),
    );
    return {
      id: saved.id,
      key,
      name: saved.name,
      prefix: saved.prefix,
      plan: saved.plan,
      limits: limitsOf(saved),
      createdAt: saved.createdAt,
      expiresAt: saved.expiresAt,
      familyId: familyOf(saved),
      scopes: scopesOf(saved),
    };
  }

  list(): Promise<KeySummary[]> {
    return this.keys.find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /**
   * The key with this id, or with the only id that starts with `ref` (at least
   * {@link MIN_ID_PREFIX_LENGTH} characters): the short ids `keys list` shows.
   */
  async find(ref: string, manager: EntityManager = this.dataSource.manager): Promise<KeySummary> {
    const id = ref.toLowerCase();
    if (!new RegExp(`^[0-9a-f-]{${MIN_ID_PREFIX_LENGTH},36}$`).test(id)) {
      throw new KeyNotFoundError(ref);
    }
    const keys = manager.getRepository(ApiKey);
    const matches = isUuid(id)
      ? await keys.find({ where: { id } })
      : await keys
          .createQueryBuilder('key')
          .where(`key.id::text LIKE :prefix`, { prefix: `${id}%` })
          .orderBy('key.id')
          .limit(10)
          .getMany();
    if (matches.length === 0) throw new KeyNotFoundError(ref);
    if (matches.length > 1) {
      throw new AmbiguousKeyIdError(
        ref,
        matches.map((k) => k.id),
      );
    }
    return matches[0];
  }

  /** The keys of a rotation family, oldest first. */
  family(familyId: string): Promise<KeySummary[]> {
    return this.keys.find({
      where: [{ id: familyId }, { familyId }],
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /**
   * Revokes the key (once: revoking it again changes nothing, `alreadyRevoked`); the key as it now
   * stands. Decided by the conditional UPDATE under the row's lock: of two revokes racing, one
   * changes the key.
   */
  /** The stored hash of the key with this id. */
  async hashOf(id: string): Promise<string> {
    const key = await this.dataSource
      .getRepository(ApiKey)
      .findOneOrFail({ where: { id }, select: { id: true, keyHash: true } });
    return key.keyHash;
  }

  async revoke(
    ref: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ key: KeySummary; alreadyRevoked: boolean }> {
    const { id } = await this.find(ref, manager);
    const { affected } = await manager
      .getRepository(ApiKey)
      .update({ id, revokedAt: IsNull() }, { revokedAt: () => 'now()' });
    return { key: await this.find(id, manager), alreadyRevoked: affected === 0 };
  }

  /**
   * Lifts the ban of the key's whole rotation family (so either key of a rotation will do);
   * `wasBanned`: whether a ban was in force (if not, nothing changed). A ban that has ended is
   * left as it is: it bans nothing.
   */
  async unban(
    ref: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ key: KeySummary; wasBanned: boolean }> {
    const key = await this.find(ref, manager);
    const { affected } = await manager
      .createQueryBuilder()
      .update(ApiKey)
      .set({ bannedUntil: null })
      .where('(id = :familyId OR family_id = :familyId) AND banned_until > now()', {
        familyId: familyOf(key),
      })
      .execute();
    return { key: await this.find(key.id, manager), wasBanned: (affected ?? 0) > 0 };
  }

  /** Bans a rotation family: every key of it, so a rotation does not escape the ban. */
  async ban(familyId: string, until: Date): Promise<void> {
    await this.keys
      .createQueryBuilder()
      .update()
      .set({ bannedUntil: until })
      .where('id = :familyId OR family_id = :familyId', { familyId })
      .execute();
  }

  /** The key with this hash, unless it is unknown or revoked (an expired key is returned). */
  findActive(keyHash: string): Promise<ActiveKey | null> {
    return this.activeKeys.load(keyHash);
  }

  /**
   * The hashes of every key that is not revoked (expired ones included: they are refused with
   * their own message), for the key cache's set of the keys' hashes.
   */
  async keyHashes(): Promise<string[]> {
    const rows = await this.keys
      .createQueryBuilder('key')
      .select('key.keyHash', 'hash')
      .where('key.revokedAt IS NULL')
      .getRawMany<{ hash: string }>();
    return rows.map((row) => row.hash);
  }

  /** Records that the key was used now. */
  async touch(id: string): Promise<void> {
    await this.lastUses.load(id);
  }

  private async findActiveBatch(hashes: readonly string[]): Promise<(ActiveKey | null)[]> {
    const rows = await this.keys.find({
      select: {
        id: true,
        keyHash: true,
        familyId: true,
        plan: true,
        perMinute: true,
        perDay: true,
        bannedUntil: true,
        expiresAt: true,
        scopes: true,
      },
      where: { keyHash: In([...new Set(hashes)]), revokedAt: IsNull() },
    });
    const byHash = new Map(rows.map((row) => [row.keyHash, row]));
    return hashes.map((hash) => {
      const row = byHash.get(hash);
      if (!row) return null;
      return {
        keyId: row.id,
        familyId: familyOf(row),
        plan: row.plan,
        limits: limitsOf(row),
        bannedUntil: row.bannedUntil,
        expiresAt: row.expiresAt,
        scopes: scopesOf(row),
      };
    });
  }

  private async touchBatch(ids: readonly string[]): Promise<null[]> {
    await this.keys.update({ id: In([...new Set(ids)]) }, { lastUsedAt: () => 'now()' });
    return ids.map(() => null);
  }
}

/**
 * The keys of these ids (uuids), revoked ones too: for the objects of their events, which their
 * consumers read with the DataSource they are given.
 */
export function keysWithIds(dataSource: DataSource, ids: string[]): Promise<ApiKey[]> {
  return dataSource.getRepository(ApiKey).findBy({ id: In(ids) });
}

/** At most this many keys per statement. */
const MAX_BATCH = 500;

/** Runs a batch once every request read in this turn of the event loop has asked. */
const nextTurn = (run: () => void): void => {
  setImmediate(run);
};

/** Runs `work` in the transaction of `manager`, or in a new one. */
function inTransaction<T>(
  dataSource: DataSource,
  manager: EntityManager | undefined,
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  return manager ? work(manager) : dataSource.transaction(work);
}

function assertFuture(expiresAt: Date | undefined): void {
  if (expiresAt !== undefined && !(expiresAt.getTime() > Date.now())) {
    throw new InvalidKeyRequestError(
      Number.isNaN(expiresAt.getTime())
        ? 'the expiry is not a valid time'
        : `the expiry ${expiresAt.toISOString()} is not in the future`,
    );
  }
}

/** A whole key id (a UUID, in either case), not a prefix of one. */
export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
