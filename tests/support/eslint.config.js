// Lint rules for the whole repository (kept out of the top level, which holds only what the layout names).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { defineConfig } from 'eslint/config';

export default defineConfig(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', '.tmp/**', '.astro/**', 'test-results/**', 'playwright-report/**', '**/*.astro', 'src/server/db/migrations/**', 'tests/unit/architecture/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', window: 'readonly', document: 'readonly', localStorage: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Named exports only.' }],
    },
  },
  {
    // Store tests reach the gateway through the injected request method (tests/support/request-mock.ts), never by
    // mocking a module: the stores' real calls, paths and bodies are what they check.
    files: ['tests/unit/stores/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Named exports only.' },
        {
          selector: "CallExpression[callee.object.name='vi'][callee.property.name=/^(mock|doMock|hoisted)$/]",
          message: 'Answer the gateway with mockRequest() from tests/support/request-mock.ts instead of mocking a module.',
        },
      ],
    },
  },
  {
    // Tools that require a default export by their own convention.
    files: ['astro.config.mjs', 'uno.config.ts', 'src/server/db/drizzle.config.ts', 'tests/**/*.config.ts', 'tests/e2e/global-setup.ts', 'tests/support/eslint.config.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
