'use strict';
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.json' }],
  },
  testTimeout: 30000,
  // Integration tests start real servers and processes; two workers fit a 2-core machine.
  maxWorkers: 2,
};
