// Lint: typescript-eslint's recommended rules, plus the dependency direction of the layers:
// nothing below the HTTP edge imports it, and the folders under src/ form layers (LAYERS).
// Imports are sorted (simple-import-sort); layout is Prettier's.
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

// The folders of src/, bottom up. A folder may import its own files and the folders of the layers
// below its own, nothing else: so no two folders can depend on each other, directly or through
// others (the cycles `node ../shared/tools/folder-cycles.mjs src` lists cannot form). Capability
// folders use db/, shared/, the platform layer and lifecycle/ (the message state machine) freely.
// The edge (src/http/, app.ts, cli.ts) and the programs beside it (admin/, emulator/) are not
// listed: they may import everything, and nothing listed may import them. A new folder joins the
// lowest layer above everything it imports.
const LAYERS = [
  ['db'],
  ['shared'],
  ['plans', 'events', 'outbound', 'provider', 'health', 'secrets'],
  ['lifecycle', 'metrics'],
  ['usage'],
  ['customers'],
  ['accounts', 'media'],
  ['auth'],
  ['suppressions'],
  ['keys', 'messages', 'senders', 'templates', 'inbound', 'portal'],
  ['broadcasts', 'receipts', 'webhooks', 'conversations'],
  // The purger calls each table owner's purge function (broadcasts/ among them).
  ['dispatch', 'purge'],
];

const layerRules = LAYERS.flatMap((layer, i) => {
  const below = LAYERS.slice(0, i).flat();
  return layer.map((folder) => ({
    files: [`src/${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^\\.\\./(?!(?:${[...below, folder].join('|')})/)[^/]+/`,
              message: `src/${folder}/ may import only the layers below it (${below.join(', ') || 'none'}): see LAYERS in eslint.config.js`,
            },
            { regex: '^\\.\\./(?:app(?:-[a-z]+)?|cli)\\.js$', message: 'only the edge imports the composition root' },
          ],
        },
      ],
    },
  }));
});

export default tseslint.config(
  { ignores: ['dist/**', 'packages/*/dist/**', 'node_modules/**', 'data/**', 'bench/results/**'] },
  ...tseslint.configs.recommended,
  {
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests read JSON answers loosely on purpose: assertions check their shape.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/http/**', 'src/app.ts', 'src/app-server.ts', 'src/cli.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/http/**', '../http/*'], message: 'services must not depend on the HTTP layer' }] },
      ],
    },
  },
  {
    // The edge, the composition root and the commands too: only config.ts reads the environment.
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'read configuration in src/config.ts only' },
      ],
    },
  },
  {
    // Units of one job (issue #23): no source file over 400 lines, no function over 80. A function
    // long only because of its SQL text says so on the line above it:
    // `// eslint-disable-next-line max-lines-per-function -- SQL text`.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  ...layerRules,
);
