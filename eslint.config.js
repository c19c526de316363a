// ESLint (flat config): the recommended JavaScript and typescript-eslint rules, without type-aware
// rules (they need a full program per run, minutes on CI's 2 cores, and `tsc --noEmit` already
// checks types). Formatting is Prettier's job (.prettierrc.json), so no stylistic rules here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'config/', 'examples/', 'dist/', '.run/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      // `_`-prefixed parameters and rest siblings are deliberate (interface conformance, omit-by-rest).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // Test fixtures build deliberately partial or malformed objects.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
