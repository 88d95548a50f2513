import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config';

// Slow suites: big models and soaks, kept apart from `npm test`.
export default mergeConfig(base, defineConfig({ test: { include: ['**/*.slow.test.ts'], exclude: ['node_modules/**'], testTimeout: 600_000 } }));
