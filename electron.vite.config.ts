import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

const shared = fileURLToPath(new URL('./src-shared', import.meta.url));
const alias = { '@shared': shared };

export default defineConfig({
  main: {
    resolve: { alias },
    build: {
      outDir: 'out/main',
      rollupOptions: {
        input: { index: fileURLToPath(new URL('./src-main/electron/main.ts', import.meta.url)) },
        // package.json "main" names out/main/index.js.
        output: { format: 'es', entryFileNames: '[name].js' },
      },
    },
  },
  preload: {
    resolve: { alias },
    build: {
      outDir: 'out/preload',
      rollupOptions: {
        input: { index: fileURLToPath(new URL('./src-main/electron/preload.ts', import.meta.url)) },
        // A sandboxed preload must be CommonJS.
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: 'src-renderer',
    base: './',
    resolve: { alias },
    plugins: [react()],
    build: {
      outDir: 'out/renderer',
      // Hashed assets only; nothing inlined as data: or script, so the strict CSP holds.
      assetsInlineLimit: 0,
      rollupOptions: {
        input: { index: fileURLToPath(new URL('./src-renderer/index.html', import.meta.url)) },
      },
    },
  },
});
