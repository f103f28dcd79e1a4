// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/**
 * Reaches into private parts of dependencies: only src/platform/ makes them, one file per
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

/** `no-restricted-syntax` with every reach: an error anywhere but in src/platform/. */
const restrictions = {
  'no-restricted-syntax': [
    'error',
    ...Object.values(PRIVATE_REACHES).map(({ selector, message }) => ({
      selector,
      message: `${message}: private to a dependency, only src/platform/ reaches it (docs/upgrading.md)`,
    })),
  ],
};

/** Everywhere in src/ and test/, but in src/platform/. No allowlist: a new reach goes there. */
const restrictedSyntax = [
  { files: ['src/**/*.ts', 'test/**/*.ts'], rules: restrictions },
  { files: ['src/platform/**/*.ts'], rules: { 'no-restricted-syntax': 'off' } },
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
      'test/module/jest.config.js',
      'test/setup/longest-first.js',
      'eslint.config.mjs',
      '.dependency-cruiser.cjs',
      'scripts/folders.cjs',
      // The TypeScript client's build, and its types generated from the served documents.
      'clients/typescript/dist/**',
      'clients/typescript/src/generated/**',
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
  ...restrictedSyntax,
  {
    files: ['test/**/*.ts', 'clients/typescript/test/**/*.ts', '**/*.spec.ts', '**/*.e2e-spec.ts'],
    rules: {
      // supertest bodies and jest matchers are `any` by design.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
