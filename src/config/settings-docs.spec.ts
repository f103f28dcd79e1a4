import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GENERATE_COMMAND } from './generated-section';
import { integer } from './settings';
import { settingsTables, withSettingsTables } from './settings-docs';

const DOCUMENT = join(__dirname, '..', '..', 'docs', 'configuration.md');

describe('docs/configuration.md', () => {
  it(`lists the variables as the modules declare them (${GENERATE_COMMAND} writes it)`, () => {
    const committed = readFileSync(DOCUMENT, 'utf8');
    const state = withSettingsTables(committed) === committed ? 'current' : 'stale';
    expect(`docs/configuration.md is ${state}`).toBe('docs/configuration.md is current');
  });

  it('groups the variables by module, and never prints a secret’s value', () => {
    const tables = settingsTables();
    expect(tables).toContain('### http');
    expect(tables).toContain('### database');
    expect(tables).toMatch(/^\| `DATABASE_URL` \| unset \| yes \|/m);
    expect(tables).toMatch(/^\| `PORT` \| `3000` \| {2}\|/m);
  });
});

describe('rules', () => {
  it('word their message once, from their bounds', () => {
    expect(integer({ min: 0, max: 65535 }).parse('x')).toEqual({
      expected: 'an integer between 0 and 65535',
    });
    expect(integer({ min: 1 }).parse('0')).toEqual({ expected: 'a positive integer' });
    expect(integer({ min: 0 }).parse('-5')).toEqual({ expected: 'a non-negative integer' });
    expect(integer({ min: 100 }).parse('99')).toEqual({
      expected: 'an integer of at least 100',
    });
    expect(integer({ min: 100 }).parse(' 150 ')).toEqual({ value: 150 });
  });
});
