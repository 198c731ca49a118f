// ESLint: typescript-eslint's recommended type-checked rules over src/ and test/ (`npm run lint`,
// in CI). The few rules relaxed below each say why.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/', 'public/', 'bin/', 'test/**/*.js', '*.config.js', '*.config.mjs', '.dependency-cruiser.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Rejecting with an AbortSignal's reason (typed any or unknown) is how aborts propagate, as in signal.throwIfAborted().
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    // Client commands load Koa, SQLite and chalk only when they need them (bench/cli-startup.bench.js).
    files: ['src/cli/**/*.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Fakes and test doubles implement async interfaces with synchronous bodies.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
);
