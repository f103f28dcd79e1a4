/**
 * Two projects: `unit` (src/**\/*.spec.ts and the TypeScript client's, no I/O) and `e2e`
 * (test/**\/*.e2e-spec.ts, a module's own in its folder under src/, and the client's
 * clients/typescript/test/, against one real PostgreSQL started by test/setup/global-setup.ts for
 * the whole run). The example module's suite (test/fixtures/widgets/) runs only where the module
 * is mounted as a team mounts it, under src/: `npm run test:module`.
 *
 * NestJS 12 packages (and commander, the keys tool's parser; pg-boss and its dependencies that
 * are modules) are ESM-only. Node runs them from our CommonJS build natively (require(esm)), but
 * Jest's module system does that only with `--experimental-vm-modules` (its require(esm) needs
 * vm.SourceTextModule, still behind that flag on Node 24, with an ExperimentalWarning on every
 * run), so @swc/jest turns them into CommonJS instead.
 */
const { availableParallelism } = require('node:os');

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2023',
    },
    module: { type: 'commonjs' },
  },
];

const esmPackages = [
  '@nestjs',
  'commander',
  '@apidevtools',
  'file-type',
  'strtok3',
  'token-types',
  '@tokenizer',
  'uint8array-extras',
  'pg-boss',
  'serialize-error',
  'non-error',
  'rrule-temporal',
  'temporal-spec',
];

const shared = {
  testEnvironment: 'node',
  testEnvironmentOptions: { globalsCleanup: 'off' },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  transform: { '^.+\\.(ts|js|mjs)$': swc },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
};

module.exports = {
  // Suites boot the application and a database, side by side: generous, never a measure of speed.
  testTimeout: 60000,
  // Suites spend much of their time waiting on a server, a database or a timer: side by side,
  // at least three even on two cores (Jest's default there is one; with two, a core sat idle
  // while both waited), one per core above that.
  maxWorkers: Math.max(3, availableParallelism()),
  testSequencer: '<rootDir>/test/setup/longest-first.js',
  projects: [
    {
      ...shared,
      displayName: 'unit',
      roots: ['<rootDir>/src', '<rootDir>/clients/typescript/src'],
      testMatch: ['**/*.spec.ts'],
      // The client's sources import each other as ES modules do, by their built names (`./x.js`).
      moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
    },
    {
      ...shared,
      displayName: 'e2e',
      roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/clients/typescript/test'],
      testMatch: ['**/*.e2e-spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/fixtures/'],
      // The client's suites run its build (`npm run build:client`, before `npm test`'s jest), as
      // a program depending on the package would load it.
      moduleNameMapper: {
        '^store-orders-client$': '<rootDir>/clients/typescript/dist/cjs/index.js',
      },
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
    },
  ],
};
