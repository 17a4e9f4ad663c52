import { defineConfig } from 'astro/config';
import node from '@astrojs/node';
import react from '@astrojs/react';
import UnoCSS from '@unocss/astro';

// One server process: Astro renders pages in middleware mode behind src/server/main.ts.
export default defineConfig({
  output: 'server',
  // Pages read no bodies; the gateway's JSON limit (src/server/http/body-limit.ts) bounds any that comes anyway.
  adapter: node({ mode: 'middleware', bodySizeLimit: 16 * 1024 }),
  integrations: [UnoCSS({ injectReset: true }), react()],
  devToolbar: { enabled: false },
  // Astro hashes its own inline scripts (the island loader) into a script-src header at build time, so the hashes
  // cannot drift; src/server/http/security-headers.ts completes that policy. Styles stay inline (UnoCSS, style="").
  security: { csp: { styleDirective: { resources: ["'self'", "'unsafe-inline'"] } } },
  build: { inlineStylesheets: 'always' },
  vite: {
    build: { chunkSizeWarningLimit: 400 },
  },
});
