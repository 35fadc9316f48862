// Bundles the extension and vscode-languageclient into one file; `vscode` is provided by the host.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  target: 'node18',
  sourcemap: true,
  minify: process.argv.includes('--minify'),
  logLevel: 'warning',
});
