// ESLint: typescript-eslint's recommended type-checked rules over src/ and test/ (`npm run lint`, in CI).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/', 'public/', 'bin/', '*.config.js', '*.config.mjs', '.dependency-cruiser.cjs', 'test/run-tests.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
);
