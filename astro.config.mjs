import { defineConfig } from 'astro/config';
import node from '@astrojs/node';
import react from '@astrojs/react';
import UnoCSS from '@unocss/astro';

// One server process: Astro renders pages in middleware mode behind src/server/main.ts.
export default defineConfig({
  output: 'server',
  adapter: node({ mode: 'middleware' }),
  integrations: [UnoCSS({ injectReset: true }), react()],
  devToolbar: { enabled: false },
  build: { inlineStylesheets: 'always' },
  vite: {
    build: { chunkSizeWarningLimit: 400 },
  },
});
