import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and the base64 of 24 random bytes (Standard Webhooks' form). */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

/**
 * The `webhook-signature` header, as Standard Webhooks' own library signs: one
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` per secret, separated by a space (two
 * while an old secret is in its grace).
 */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  const at = new Date(timestamp * 1000);
  return secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' ');
}

const ENCRYPTED = 'aes256gcm:';
const PLAIN = 'plain:';

/**
 * Secrets as the database keeps them: encrypted with AES-256-GCM under `key` when one is set
 * (`aes256gcm:<iv>.<tag>.<ciphertext>`, base64), else as they are (`plain:<secret>`), so a
 * dump alone cannot sign messages when the key is kept elsewhere.
 */
export class SecretBox {
  constructor(private readonly key: Buffer | undefined) {}

  get encrypts(): boolean {
    return this.key !== undefined;
  }

  seal(secret: string): string {
    if (this.key === undefined) return `${PLAIN}${secret}`;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${ENCRYPTED}${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${sealed.toString('base64')}`;
  }

  open(stored: string): string {
    if (stored.startsWith(PLAIN)) return stored.slice(PLAIN.length);
    if (!stored.startsWith(ENCRYPTED)) throw new Error('the stored secret has an unknown form');
    if (this.key === undefined) {
      throw new Error('the secret is encrypted and WEBHOOK_SECRETS_KEY is not set');
    }
    const [iv, tag, sealed] = stored.slice(ENCRYPTED.length).split('.');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    try {
      return Buffer.concat([
        decipher.update(Buffer.from(sealed, 'base64')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new Error('the secret cannot be decrypted with WEBHOOK_SECRETS_KEY');
    }
  }
}
