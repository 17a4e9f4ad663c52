import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // What unit and integration tests run of src, measured in one run (`npm run test:coverage`, part of `npm test`).
    // Servers the integration tests spawn as child processes are not measured: only code loaded in the test process.
    coverage: {
      provider: 'v8',
      include: ['src/**/*.{ts,tsx,mjs}'],
      exclude: ['src/**/*.d.ts'],
      reporter: ['text-summary', 'html'],
      reportsDirectory: '.tmp/coverage',
      // A floor that only ever rises: just below what the suites measure (61.36 / 49.19 / 60.00 / 64.34 % when last raised);
      // raise it as coverage grows, never lower it.
      thresholds: { statements: 61, branches: 49, functions: 59, lines: 64 },
    },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['tests/support/vitest-global.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
