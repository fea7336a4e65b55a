import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['node_modules', 'out', 'dist', 'coverage', 'test-results'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  // Dependencies point inward: core never imports HTTP, Electron or React; server never imports Electron.
  {
    files: ['src/core/**/*.ts', 'src/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            'express',
            'electron',
            'react',
            'react-dom',
            '**/server/**',
            '**/main/**',
            '**/renderer/**',
            '**/cli/**',
          ],
        },
      ],
    },
  },
  {
    files: ['src/server/**/*.ts', 'src/cli/**/*.ts', 'src/db/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['electron', '**/main/**', '**/renderer/**'] }] },
  },
  {
    files: ['src/client/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['node:*', 'express', 'electron', '**/server/**', '**/core/**', '**/db/**'] },
      ],
    },
  },
  // Tests read JSON bodies of many shapes.
  { files: ['test/**/*.{ts,tsx}'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  prettier,
);
