import { defineConfig, presetWind3 } from 'unocss';

// Colours are CSS variables set per theme in src/layouts/theme.css, so one class serves dark and light.
export default defineConfig({
  presets: [presetWind3()],
  // The wallet island is client-only, so Astro's server graph never imports its files: scan them directly.
  content: { filesystem: ['src/wallet/**/*.{ts,tsx}', 'src/operator/**/*.{ts,tsx}'] },
  theme: {
    colors: {
      bg: 'var(--c-bg)',
      fg: 'var(--c-fg)',
      primary: 'var(--c-primary)',
      surface: 'var(--c-surface)',
      muted: 'var(--c-muted)',
      line: 'var(--c-line)',
      accent: 'var(--c-accent)',
      danger: 'var(--c-danger)',
      success: 'var(--c-success)',
    },
  },
  shortcuts: {
    'btn': 'inline-flex items-center justify-center gap-2 rounded-xl px-4 h-12 font-600 text-base transition-opacity disabled:opacity-40 disabled:cursor-not-allowed cursor-pointer border-0',
    'btn-primary': 'btn bg-primary text-bg',
    'btn-ghost': 'btn bg-surface text-fg',
    'field': 'w-full h-12 rounded-xl bg-surface text-fg px-4 border border-line outline-none focus:border-primary text-base',
    'card': 'rounded-2xl bg-surface p-4',
    'screen': 'flex flex-col gap-4 px-4 pt-4 pb-24 min-h-full',
  },
});
