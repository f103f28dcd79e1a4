import { defineEventObjects } from '../audit/audit-objects';
import { keysWithIds } from './api-keys.repository';
import { keyResourceJson } from './key-json';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What an event about a key carries: the Key as the admin API shows it, never its hash. */
defineEventObjects('key', async (ids, db) => {
  const wanted = ids.filter((id) => UUID.test(id));
  if (wanted.length === 0) return new Map<string, string>();
  const keys = await keysWithIds(db, wanted);
  return new Map(keys.map((key) => [key.id, JSON.stringify(keyResourceJson(key))]));
});
