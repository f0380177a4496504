// Bundles the extension into dist/extension.js (and, with --tests, the unit
// tests into dist/test/); --production minifies, --watch rebuilds on change.
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const tests = process.argv.includes('--tests');

/** @type {import('esbuild').BuildOptions} */
const common = {
  bundle: true,
  platform: 'node',
  target: 'node18',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: tests ? 'warning' : 'info',
};

const options = tests
  ? {
      ...common,
      entryPoints: readdirSync('test/unit')
        .filter((name) => name.endsWith('.test.ts'))
        .map((name) => `test/unit/${name}`),
      outdir: 'dist/test',
      // The unit tests cover the modules that do not import vscode.
      external: ['vscode'],
    }
  : {
      ...common,
      entryPoints: ['src/extension.ts'],
      outfile: 'dist/extension.js',
      // Provided by VS Code at run time.
      external: ['vscode'],
    };

if (watch) {
  const context = await esbuild.context(options);
  await context.watch();
} else {
  await esbuild.build(options);
}
