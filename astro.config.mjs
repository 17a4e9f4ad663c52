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
  build: { inlineStylesheets: 'always' },
  vite: {
    build: { chunkSizeWarningLimit: 400 },
  },
});
