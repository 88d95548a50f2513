import { defineConfig } from 'vitest/config';
import base from './vitest.config';

// Slow suites: big models and soaks, kept apart from `npm test`. The base
// config excludes *.slow.test.ts, so the test section is replaced, not merged.
export default defineConfig({
  resolve: base.resolve,
  test: {
    ...base.test,
    include: ['**/*.slow.test.ts'],
    exclude: ['node_modules/**', 'out/**'],
    testTimeout: 600_000,
    passWithNoTests: false,
  },
});
