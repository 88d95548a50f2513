import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  resolve: { alias: { '@shared': fileURLToPath(new URL('./src-shared', import.meta.url)) } },
  test: {
    include: [
      'src-shared/**/*.test.ts',
      'src-main/**/*.test.ts',
      'src-renderer/**/*.test.{ts,tsx}',
      'e2e/**/*.e2e.test.ts',
    ],
    exclude: ['**/*.slow.test.ts', 'node_modules/**'],
    globalSetup: ['./scripts/vitest-global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests spawn real processes on a 2-core machine: keep workers few.
    maxWorkers: 2,
  },
});
