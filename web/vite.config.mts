import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

// Built into web/dist, which the gateway serves at `/` (the API stays under /v1 and /api).
// `vite dev` proxies the API to a running gateway (npm start).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1500 },
  server: { proxy: { '/v1': 'http://127.0.0.1:8080', '/api': 'http://127.0.0.1:8080' } },
});
