// Lint rules, including the layering rule: folders are runtime environments and
// imports only go down (renderer -> shared, main -> shared; electron only in
// src-main/electron).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const nodeBuiltins = [
  'node:*',
  'fs',
  'path',
  'net',
  'crypto',
  'os',
  'child_process',
  'http',
  'stream',
  'events',
  'util',
  'worker_threads',
];
const noNode = nodeBuiltins.map((name) => ({
  group: [name],
  message: 'this layer must not import Node built-ins',
}));
const noElectron = [
  { group: ['electron', 'electron/*'], message: 'only src-main/electron/ may import electron' },
];
const noReact = [
  {
    group: ['react', 'react-dom', 'react/*', 'react-dom/*', 'zustand', 'zustand/*'],
    message: 'src-shared stays free of UI libraries',
  },
];
const noMain = [
  {
    group: ['**/src-main/**', '../src-main/*'],
    message: 'the renderer talks to main only through the contract in src-shared/lab',
  },
];
const noRenderer = [{ group: ['**/src-renderer/**'], message: 'main must not import renderer code' }];

// Layering inside src-main (docs/architecture.md): a folder may import only
// the folders below it. Each zone says who must not import what.
const mainLayers = [
  { target: './src-main/rank', from: './src-main/lab', message: 'a rank process does not depend on the lab' },
  {
    target: './src-main/electron',
    from: './src-main/web',
    message: 'Electron and browser mode are siblings',
  },
  ...['lab', 'cli', 'web', 'electron'].map((upper) => ({
    target: './src-main/engine',
    from: `./src-main/${upper}`,
    message: 'the engine is below the lab and the front ends',
  })),
];

export default tseslint.config(
  {
    ignores: [
      'out/**',
      'dist/**',
      'node_modules/**',
      'test-results/**',
      'artifacts/**',
      'fixtures/**',
      'src-renderer/public/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src-shared/**/*.ts'],
    ignores: ['src-shared/**/*.test.ts'],
    languageOptions: { globals: {} },
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [...noNode, ...noElectron, ...noReact, ...noMain, ...noRenderer] },
      ],
      // The shared layer has no DOM and no Node: forbid their globals too.
      'no-restricted-globals': [
        'error',
        'window',
        'document',
        'process',
        'Buffer',
        'require',
        'navigator',
        'localStorage',
      ],
    },
  },
  {
    files: ['src-renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    rules: { 'no-restricted-imports': ['error', { patterns: [...noNode, ...noElectron, ...noMain] }] },
  },
  {
    files: [
      'src-main/**/*.ts',
      'scripts/**/*.{js,mjs,ts}',
      'bin/**/*.mjs',
      'e2e/**/*.ts',
      '*.config.{ts,js}',
      'src-shared/**/*.test.ts',
    ],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // Import cycles fail lint. The TypeScript resolver follows the @shared
    // alias of tsconfig.base.json, so a cycle through src-shared is seen too.
    files: ['src-main/**/*.ts', 'src-shared/**/*.ts', 'src-renderer/**/*.{ts,tsx}'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.tsx'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      // Type-only imports do not count (they are erased); a handler table may name its host's type.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: mainLayers }],
    },
  },
  {
    files: ['src-main/**/*.ts'],
    ignores: ['src-main/electron/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...noElectron, ...noRenderer] }] },
  },
);
