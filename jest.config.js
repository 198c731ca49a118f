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
  // Integration tests start real servers and processes: one worker per CPU the process may use.
  maxWorkers: Math.max(1, require('node:os').availableParallelism()),
};
