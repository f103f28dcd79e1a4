/**
 * `npm run test:module` only (never part of `npm test`): the promise that a module is one folder
 * and one line, checked on a scratch copy of the repository; it runs the lint and suites there,
 * and takes minutes. Same transform as the other projects (../../jest.config.js).
 */
const base = require('../../jest.config.js');

module.exports = {
  ...base.projects[0],
  displayName: 'module',
  rootDir: '../..',
  roots: ['<rootDir>/test/module'],
  testMatch: ['**/*.module-spec.ts'],
  testTimeout: 60000,
};
