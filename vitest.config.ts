import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // sshd- and process-based tests share one 2-core machine; keep parallelism modest so timing-sensitive
    // lifecycle tests are not starved.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
