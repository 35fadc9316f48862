// ESLint flat config: typescript-eslint's type-aware recommended rules for the extension and its tests,
// the plain JavaScript rules for the build script and the e2e driver. `npm run lint` fails on any warning.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The e2e driver runs in node and hands some functions to the browser (page.evaluate).
const nodeAndBrowser = Object.fromEntries([
  'process', 'console', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'fetch', 'Buffer', 'URL',
  'document', 'getComputedStyle', 'window',
].map((name) => [name, 'readonly']));

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', '*.vsix'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `void promise` is how this code says "fire and forget"; everything else must be awaited or handled.
      '@typescript-eslint/no-floating-promises': ['error', {
        ignoreVoid: true,
        // node:test's test() returns a promise the runner itself awaits.
        allowForKnownSafeCalls: [{ from: 'package', name: 'test', package: 'node:test' }],
      }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: nodeAndBrowser },
  },
);
