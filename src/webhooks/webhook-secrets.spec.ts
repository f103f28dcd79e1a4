import { createHmac, randomBytes } from 'node:crypto';
import { newSecret, SecretBox, signatureHeader } from './webhook-secrets';

describe('webhook secrets', () => {
  it('makes whsec_ secrets of 24 random bytes', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(24);
    expect(newSecret()).not.toBe(secret);
  });

  it('signs "<id>.<timestamp>.<body>" with each secret, space-separated', () => {
    const [a, b] = [newSecret(), newSecret()];
    const header = signatureHeader([a, b], 'evt_1', 1700000000, '{"x":1}');
    const expected = (secret: string) =>
      `v1,${createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
        .update('evt_1.1700000000.{"x":1}')
        .digest('base64')}`;
    expect(header).toBe(`${expected(a)} ${expected(b)}`);
  });

  it('encrypts at rest with a key, and opens only with that key', () => {
    const secret = newSecret();
    const box = new SecretBox(randomBytes(32));
    const sealed = box.seal(secret);
    expect(sealed).toMatch(/^aes256gcm:/);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.open(sealed)).toBe(secret);
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow(/cannot be decrypted/);
    expect(() => new SecretBox(undefined).open(sealed)).toThrow(/WEBHOOK_SECRETS_KEY is not set/);
  });

  it('keeps secrets as they are without a key', () => {
    const box = new SecretBox(undefined);
    expect(box.encrypts).toBe(false);
    expect(box.open(box.seal('whsec_abc'))).toBe('whsec_abc');
  });
});
