// Bundles the extension into one file, dist/extension.js, as the VS Code documentation recommends:
// VS Code loads one module instead of some two hundred (the language client and its protocol
// packages), and the .vsix carries no node_modules. `vscode` exists only inside the editor, so it
// stays external. `--production` minifies and leaves the source map out (what `vsce package`
// ships); without it the bundle keeps names and a linked source map for debugging.
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');

await esbuild.build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  format: 'cjs',
  platform: 'node',
  // VS Code 1.91 (the oldest engine package.json allows) runs extensions on Electron 29's Node 20.
  target: 'node20',
  outfile: 'dist/extension.js',
  external: ['vscode'],
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
});
