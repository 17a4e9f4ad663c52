import { defineConfig, devices } from '@playwright/test';

// Debian's Chromium, never a downloaded browser; the flags keep it off this machine's closed network.
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: '../../test-results',
  globalSetup: './global-setup.ts',
  fullyParallel: false,
  workers: 2,
  retries: process.env.CI ? 1 : 0,
  // Room for a loaded host: with two workers, each a gateway, chain nodes and a browser on two cores, a CI run saw a
  // load average of 11 and a mini app's first open take over 10 s. A waiting assertion returns as soon as it holds, so
  // a green run is no slower for it.
  timeout: 90_000,
  expect: { timeout: 20_000 },
  reporter: [['list']],
  use: {
    ...devices['Pixel 7'],
    viewport: { width: 390, height: 844 },
    browserName: 'chromium',
    launchOptions: { executablePath: process.env.CHROME_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
});
