import { defineConfig } from 'astro/config';
import node from '@astrojs/node';
import react from '@astrojs/react';
import UnoCSS from '@unocss/astro';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The service worker (public/sw.js) gets the build's version: a hash of every file the browser may load, so a new
 * build is a new worker with its own cache (issue 36 item 5), and the same build is the same worker.
 */
const versionedServiceWorker = {
  name: 'versioned-service-worker',
  hooks: {
    'astro:build:done': ({ dir }) => {
      const client = fileURLToPath(dir);
      const worker = join(client, 'sw.js');
      const files = (folder) => readdirSync(folder, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(join(folder, entry.name)) : [join(folder, entry.name)]));
      const hash = createHash('sha256');
      // The worker itself counts too (still with its placeholder here): a change of it alone is a new version.
      for (const file of files(client).sort()) hash.update(relative(client, file)).update(readFileSync(file));
      const version = hash.digest('hex').slice(0, 16);
      const source = readFileSync(worker, 'utf8');
      if (!source.includes("const VERSION = 'development';")) throw new Error('public/sw.js no longer declares its VERSION');
      writeFileSync(worker, source.replace("const VERSION = 'development';", `const VERSION = '${version}';`));
    },
  },
};

// One server process: Astro renders pages in middleware mode behind src/server/main.ts.
export default defineConfig({
  output: 'server',
  // Pages read no bodies; the gateway's JSON limit (src/server/http/body-limit.ts) bounds any that comes anyway.
  adapter: node({ mode: 'middleware', bodySizeLimit: 16 * 1024 }),
  integrations: [UnoCSS({ injectReset: true }), react(), versionedServiceWorker],
  devToolbar: { enabled: false },
  // Astro hashes its own inline scripts (the island loader) into a script-src header at build time, so the hashes
  // cannot drift; src/server/http/security-headers.ts completes that policy. Styles stay inline (UnoCSS, style="").
  security: { csp: { styleDirective: { resources: ["'self'", "'unsafe-inline'"] } } },
  build: { inlineStylesheets: 'always' },
  vite: {
    build: { chunkSizeWarningLimit: 400 },
  },
});
