// The console's build: a plain Vite app, built by `npm run build` into dist/console
// (served by src/gateway/console.ts). Hashed asset names are what lets the server mark
// them immutable; nothing is inlined (an inline asset would need `data:` beyond images
// under the console's Content-Security-Policy).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { budgetReport } from './build/budget.js';
import { precompress } from './build/precompress.js';

const root = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(root, '../dist/console');

export default defineConfig({
  root,
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir,
    emptyOutDir: true,
    assetsInlineLimit: 0,
    manifest: true,
    target: 'es2022',
    reportCompressedSize: true,
  },
  plugins: [precompress(outDir), budgetReport(outDir)],
});
