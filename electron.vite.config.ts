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
      rollupOptions: { input: { index: fileURLToPath(new URL('./src-main/electron/main.ts', import.meta.url)) } },
    },
  },
  preload: {
    resolve: { alias },
    build: {
      outDir: 'out/preload',
      rollupOptions: { input: { index: fileURLToPath(new URL('./src-main/electron/preload.ts', import.meta.url)) } },
    },
  },
  renderer: {
    root: 'src-renderer',
    resolve: { alias },
    plugins: [react()],
    build: {
      outDir: 'out/renderer',
      rollupOptions: { input: { index: fileURLToPath(new URL('./src-renderer/index.html', import.meta.url)) } },
    },
  },
});
