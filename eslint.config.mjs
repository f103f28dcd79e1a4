// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * Reaches into private parts of dependencies (#29): only src/platform/ makes them, one file per
 * internal, each checked on the assembled application by test/platform.e2e-spec.ts and listed in
 * docs/upgrading.md. Anywhere else in src/ and test/, each of these is an error.
 */
const PRIVATE_REACHES = {
  underscoreMember: {
    // globalThis's own (`__TEST_CLUSTERS__` of the e2e setup) belong to no dependency.
    selector: "MemberExpression[property.name=/^_/]:not([object.name='globalThis'])",
    message: 'an underscore-prefixed member (`_httpMessage`, `_eventsCount`, `__proto__` …)',
  },
  underscoreKey: {
    selector: 'MemberExpression[computed=true][property.value=/^_/]',
    message: 'an underscore-prefixed member, by its name as a string',
  },
  kOutHeaders: {
    selector: "Literal[value='kOutHeaders']",
    message: "Node's private `kOutHeaders` header store",
  },
  symbolFor: {
    selector: "CallExpression[callee.object.name='Symbol'][callee.property.name='for']",
    message: "`Symbol.for(…)`: a dependency's registered private symbol",
  },
  ownSymbols: {
    selector: "CallExpression[callee.property.name='getOwnPropertySymbols']",
    message: "`Object.getOwnPropertySymbols`: a dependency's private symbols",
  },
  driverMaster: {
    selector: "MemberExpression[property.name='master']",
    message: "TypeORM's private `driver.master` (use pgPoolOf of src/platform/pg-pool.ts)",
  },
  routerStack: {
    selector: "MemberExpression[object.property.name=/^_?router$/][property.name='stack']",
    message: "Express's private `router.stack`",
  },
  setPrototypeOf: {
    selector: "CallExpression[callee.property.name='setPrototypeOf']",
    message: '`Object.setPrototypeOf`: a prototype swap',
  },
  protoKey: {
    selector: "Property[key.name='__proto__']",
    message: '`__proto__` in a literal: a prototype swap',
  },
  connectionStream: {
    selector: "MemberExpression[object.property.name='connection'][property.name='stream']",
    message: "pg's private `connection.stream`",
  },
  fakeMetric: {
    selector: "CallExpression[callee.property.name='registerMetric'] > TSAsExpression",
    message: "an object cast into prom-client's Registry as a metric",
  },
};

/**
 * Files outside src/platform/ that keep some reaches for now, and which. Each is to be measured
 * and removed (#29 item 1), except where said.
 */
const REACHES_ALLOWED = {
  'src/common/http/response-header.ts': ['kOutHeaders', 'ownSymbols'],
  'src/common/http/api-routes-first.ts': ['routerStack'],
  'src/metrics/request-metrics.ts': ['fakeMetric'],
  // Not to be removed: reads Express's table, only to hold the route table to what is served.
  'test/openapi.e2e-spec.ts': ['routerStack'],
  // Not to be removed: the canaries of src/platform/, which look at the internals it relies on.
  'test/platform.e2e-spec.ts': ['underscoreMember', 'driverMaster'],
};

/**
 * The service's process keeps Buffer#toString to UTF-8 (docs/performance.md): one call with
 * another encoding makes pg's decoding of every column of every row take V8's generic path.
 * To be measured and removed (#29 item 1).
 */
const UTF8_TO_STRING_ONLY = {
  selector:
    "CallExpression[callee.property.name='toString'][arguments.0.value=/^(hex|base64|base64url|latin1|binary|ascii|ucs-?2|utf-?16le)$/i]",
  message:
    'Buffer#toString with an encoding other than UTF-8 slows every row pg reads ' +
    '(docs/performance.md): use btoa/atob, digest(encoding), or number.toString(16).',
};

/** `no-restricted-syntax` with the reaches not in `allowed`, and the Buffer#toString ban if `utf8`. */
function restrictions(allowed, utf8) {
  const reaches = Object.entries(PRIVATE_REACHES)
    .filter(([name]) => !allowed.includes(name))
    .map(([, { selector, message }]) => ({
      selector,
      message: `${message}: private to a dependency, only src/platform/ reaches it (#29, docs/upgrading.md)`,
    }));
  return { 'no-restricted-syntax': ['error', ...reaches, ...(utf8 ? [UTF8_TO_STRING_ONLY] : [])] };
}

/** Later entries win: everywhere, then the service's own code, src/platform/, the allowed files. */
const restrictedSyntax = [
  { files: ['src/**/*.ts', 'test/**/*.ts'], rules: restrictions([], false) },
  { files: ['src/**/*.ts'], ignores: ['**/*.spec.ts'], rules: restrictions([], true) },
  { files: ['src/platform/**/*.ts'], rules: { 'no-restricted-syntax': 'off' } },
  {
    files: ['src/platform/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: { 'no-restricted-syntax': ['error', UTF8_TO_STRING_ONLY] },
  },
  ...Object.entries(REACHES_ALLOWED).map(([file, allowed]) => ({
    files: [file],
    rules: restrictions(allowed, file.startsWith('src/') && !file.endsWith('.spec.ts')),
  })),
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'coverage/**',
      'node_modules/**',
      '.data/**',
      'jest.config.js',
      'test/stack/jest.config.js',
      'eslint.config.mjs',
      // Generated by openapi-typescript from the served document (test/openapi.e2e-spec.ts).
      'test/support/petstore-api.ts',
      'test/support/petstore-api-v2.ts',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-extraneous-class': ['error', { allowWithDecorator: true }],
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // Nest and Express type their option bags as classes; object literals are how they are used.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
    },
  },
  {
    // Dependencies point one way: no two modules import each other, however far round.
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js'] })],
      // Without these, the rule does not follow imports into TypeScript files at all.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: { 'import-x/no-cycle': 'error' },
  },
  ...restrictedSyntax,
  {
    // common/ is what every feature relies on: it depends on none of them (or on the app).
    files: ['src/common/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./\\.\\./|^\\.\\./(?!errors/|http/)',
              message:
                'src/common depends on no feature: move the code, or add an extension point.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: {
      // supertest bodies and jest matchers are `any` by design.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
