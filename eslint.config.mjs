// ESLint flat config: typescript-eslint's recommended rules on every TypeScript file, plus the
// type-aware rules that catch what tests rarely do (a promise nobody awaits or catches, a promise
// handed to a callback that ignores it, a cast left over). `npm run lint` runs this, then knip (knip.jsonc).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import nodePlugin from 'eslint-plugin-n';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      '**/node_modules/**',
      'dist/**',
      'coverage/**',
      'bench/results/**',
      // Separate packages with their own dependencies and lock files (installed on demand, not by
      // the root `npm ci`): the typed client examples and the PostGraphile bench servers.
      'examples/**',
      'bench/postgraphile/**',
      'bench/postgraphile5/**',
    ],
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['**/*.cjs', 'jest.config.js'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    languageOptions: {
      // The type-aware rules below read the program that tsconfig.json describes.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // A cast that changes nothing hides the day the type it worked around changes.
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      // `_name` marks a parameter or binding that must exist for its position or shape (an Express
      // error handler's fourth argument, a destructured field left out on purpose).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // @types/node follows the newest Node; engines says the oldest supported line. This rule reads
    // engines and refuses a built-in module, global or method that line lacks, so code cannot
    // lean on an API only newer lines have and pass every check but the oldest line's test run.
    files: ['src/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts', 'scripts/**/*.{js,mjs,cjs}'],
    plugins: { n: nodePlugin },
    rules: { 'n/no-unsupported-features/node-builtins': ['error', { allowExperimental: true }] },
  },
  {
    // Tests and benches read JSON answers of the service and of its peers (PostGraphile, the
    // reference servers) and assert or compare them field by field: `any` there means "the answer
    // under test", whose shape the assertions check. src/ keeps the rule.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
