/**
 * `npm run test:stack` only (never part of `npm test`): the stack test needs a Docker engine and
 * takes minutes. Same transform as the other projects (../../jest.config.js).
 */
const base = require('../../jest.config.js');

module.exports = {
  ...base.projects[0],
  displayName: 'stack',
  rootDir: '../..',
  roots: ['<rootDir>/test/stack'],
  testMatch: ['**/*.stack-spec.ts'],
  testTimeout: 60000,
};
