import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import QRCode from 'qrcode';
import { test, expect, logIn } from './fixtures.ts';
import { CHROMIUM_ARGS } from './playwright.config.ts';
import { addressOf, apiUser } from './send-helpers.ts';

/** A YUV4MPEG2 video of a QR code, for Chromium's fake camera: dark modules 0, light 255, a quiet zone around. */
function writeQrVideo(text: string): string {
  const width = 640;
  const height = 480;
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const quiet = 4;
  const scale = Math.floor(300 / (modules.size + 2 * quiet));
  const side = (modules.size + 2 * quiet) * scale;
  const left = Math.floor((width - side) / 2);
  const top = Math.floor((height - side) / 2);
  const luma = Buffer.alloc(width * height, 255);
  for (let row = 0; row < modules.size; row++) {
    for (let col = 0; col < modules.size; col++) {
      if (!modules.get(row, col)) continue;
      for (let y = 0; y < scale; y++) {
        const offset = (top + (row + quiet) * scale + y) * width + left + (col + quiet) * scale;
        luma.fill(0, offset, offset + scale);
      }
    }
  }
  const chroma = Buffer.alloc((width * height) / 4, 128);
  const frame = Buffer.concat([Buffer.from('FRAME\n'), luma, chroma, chroma]);
  const dir = join(tmpdir(), 'wallet-e2e-qr');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `qr-${process.pid}.y4m`);
  writeFileSync(file, Buffer.concat([Buffer.from(`YUV4MPEG2 W${width} H${height} F10:1 Ip A1:1 C420jpeg\n`), ...Array.from({ length: 5 }, () => frame)]));
  return file;
}

const SCANNED = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu';
const video = writeQrVideo(`bitcoin:${SCANNED}?amount=0.001`);

// Chromium's fake camera shows the video of a QR code; its fake permission prompt says yes.
test.use({
  appEnv: { LOG_LEVEL: 'info', RATES_WALK_MS: '0' },
  launchOptions: {
    executablePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
    args: [...CHROMIUM_ARGS, '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream', `--use-file-for-fake-video-capture=${video}`],
  },
});

test.describe('send: QR scanning', () => {
  test('a QR code shown to the camera fills the address', async ({ page, app, context }) => {
    await context.grantPermissions(['camera']);
    const dave = await apiUser(app);
    await addressOf(page, dave, 'BTC');
    await logIn(page, dave.email);
    await page.goto('/home/asset/BTC/send');
    await page.getByTestId('send-scan').click();
    await expect(page.getByTestId('qr-scanner')).toBeVisible();
    await expect(page.getByTestId('send-address')).toHaveValue(SCANNED, { timeout: 20_000 });
    await expect(page.getByTestId('toast')).toHaveText('Address scanned');
    await expect(page.getByTestId('qr-scanner')).toHaveCount(0);
  });
});
