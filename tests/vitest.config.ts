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
      // A floor that only ever rises, half a point below what the suites measure (77.2 / 66.7 / 75.9 / 80.0 % when last
      // raised, once most servers ran in the test process; runs differ by a tenth or two, as background timers fire or
      // not); raise it as coverage grows, never lower it.
      thresholds: { statements: 76.5, branches: 66, functions: 75.3, lines: 79.4 },
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
