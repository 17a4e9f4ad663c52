/**
 * The installable app's PNG icons (issue 36 item 5) from public/favicon.svg, drawn by the Chromium the tests use:
 * `node ops/make-icons.ts` writes public/icons/icon-192.png, icon-512.png (the logo as it is) and maskable-512.png
 * (full-bleed background, the logo inside the 80 % safe zone a launcher may crop to). Run it after changing the logo.
 */
import { chromium } from '@playwright/test';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const svg = readFileSync(`${root}public/favicon.svg`, 'utf8');
const image = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
const BACKGROUND = '#202025';

const icons = [
  { file: 'icon-192.png', size: 192, logo: 1, background: 'transparent' },
  { file: 'icon-512.png', size: 512, logo: 1, background: 'transparent' },
  { file: 'maskable-512.png', size: 512, logo: 0.75, background: BACKGROUND },
];

const browser = await chromium.launch({ executablePath: process.env.CHROME_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  for (const icon of icons) {
    const page = await browser.newPage({ viewport: { width: icon.size, height: icon.size } });
    const side = Math.round(icon.size * icon.logo);
    await page.setContent(
      `<html><body style="margin:0;width:${icon.size}px;height:${icon.size}px;display:flex;align-items:center;justify-content:center;background:${icon.background}">` +
        `<img src="${image}" width="${side}" height="${side}"></body></html>`,
    );
    await page.locator('img').evaluate((img: HTMLImageElement) => img.decode());
    writeFileSync(`${root}public/icons/${icon.file}`, await page.screenshot({ omitBackground: icon.background === 'transparent' }));
    await page.close();
  }
} finally {
  await browser.close();
}
