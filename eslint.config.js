import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'coverage/**', 'bench/tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Named exports only (STYLE.md).' }],
    },
  },
  {
    // Issue 19: the environment is read in one place, through one typed schema.
    files: ['apps/server/src/**/*.ts'],
    ignores: ['apps/server/src/core/core.config.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read settings through core/core.config.ts (one typed schema of every SVC_* variable).' }],
    },
  },
  {
    // Issue 19, layering: feature code (services, stores, policies, schemas) never imports Fastify's glue in http/;
    // what every layer shares is in core/. A feature's *.routes.ts is its Fastify plugin and may.
    files: ['apps/server/src/*/**/*.ts'],
    ignores: ['apps/server/src/http/**', '**/*.routes.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/http/*'], message: 'Feature and core code does not import http/ (Fastify glue); shared code lives in core/.' }] }],
    },
  },
  {
    // Issue 19, layering: SQL on svc's database is written in a *.store.ts only (db/ holds the schema, the
    // migrations and the connection). data.compiler.ts and data.model.ts build SQL for the customer's warehouse,
    // not svc's database.
    files: ['apps/server/src/**/*.ts'],
    ignores: ['**/*.store.ts', '**/*.test.ts', 'apps/server/src/db/**', 'apps/server/src/data/compiler/compiler.query.ts', 'apps/server/src/data/semantic/semantic.model.ts'],
    rules: {
      'no-restricted-syntax': ['error',
        { selector: 'ExportDefaultDeclaration', message: 'Named exports only (STYLE.md).' },
        { selector: "CallExpression[callee.property.name=/^(selectFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto|selectNoFrom)$/]", message: 'SQL on svc\'s database belongs in the feature\'s *.store.ts (issue 19).' },
        { selector: "TaggedTemplateExpression[tag.name='sql']", message: 'SQL on svc\'s database belongs in the feature\'s *.store.ts (issue 19).' },
      ],
    },
  },
  {
    files: ['apps/embed/src/**/*.{ts,tsx}', 'apps/console/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    files: ['**/*.config.ts', '**/*.config.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // The SQLite warehouse's worker (issue 32): a CommonJS script each child process runs.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { process: 'readonly', require: 'readonly', Buffer: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The bench's worker scripts run on Node, which has these as globals.
    files: ['bench/**/*.mjs'],
    languageOptions: { globals: { fetch: 'readonly', performance: 'readonly' } },
  },
);
