// ESLint for the web app (flat config). `npm run lint`; runs in `make test` and `make lint`.
//
// - typescript-eslint's type-checked recommended set: floating promises, unsafe `any` flows and
//   misused promises are the bugs a React + axios app actually has.
// - react-hooks: the rules of hooks and complete effect dependencies.
// - jsx-a11y: the accessibility rules (labels, roles, keyboard access).
// - import-x/no-restricted-paths: a feature (src/features/<name>/) uses another feature only
//   through that feature's public modules (`index.ts`, `api.ts`), never its components or other
//   internals; shared code (src/components, src/lib) never imports a feature, so the
//   dependencies point one way: routes -> features -> shared.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import jsxA11y from 'eslint-plugin-jsx-a11y';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

const root = import.meta.dirname;
const featuresDir = path.join(root, 'src/features');
const features = readdirSync(featuresDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
/** What a feature offers the others: its index and its API module. */
const PUBLIC_MODULES = ['index.ts', 'index.tsx', 'api.ts'].map((name) => path.join(featuresDir, '*', name));

const featureZones = features.map((name) => ({
  target: path.join(featuresDir, name, '**'),
  from: path.join(featuresDir, `!(${name})`, '**'),
  except: PUBLIC_MODULES,
  message: `Import another feature through its public modules (src/features/<feature>/index.ts or api.ts), not its internals.`,
}));
const sharedZone = {
  target: [path.join(root, 'src/components/**'), path.join(root, 'src/lib/**')],
  from: path.join(featuresDir, '**'),
  message: 'Shared code (src/components, src/lib) must not depend on a feature.',
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/lib/api-schema.ts'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: root },
      globals: { ...globals.browser },
    },
  },
  {
    files: ['src/**/*.{ts,tsx}', 'tests/unit/**/*.{ts,tsx}'],
    extends: [jsxA11y.flatConfigs.recommended],
    plugins: { 'import-x': importX, 'react-hooks': reactHooks },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.json'] })],
    },
    rules: {
      // The two rules of hooks. The plugin's React Compiler diagnostics (set-state-in-effect,
      // static-components, ...) are left out: the app does not use the compiler, and they are
      // the slowest rules here by far.
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
      // An async event handler (onClick={save}) is allowed: React ignores a handler's return
      // value, and the app's async handlers catch their own errors and toast them. Promises
      // passed anywhere else are still checked.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      'import-x/no-restricted-paths': ['error', { zones: [...featureZones, sharedZone] }],
      // Type-only imports stay type-only (isolatedModules: the bundler drops them safely).
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // `a!` hides the null the types warn about; a check or a narrowed type says what is meant.
      '@typescript-eslint/no-non-null-assertion': 'error',
      // Every switch over a union handles each member (a new role or status cannot be missed).
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `x != null` (null or undefined) is the one loose comparison kept: it is an idiom.
      'eqeqeq': ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // Tests: a fake axios adapter is async by contract without awaiting anything, and a test
    // may assert a value it has just checked is present.
    files: ['tests/unit/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // Node scripts outside the TypeScript project (the e2e runner, this file).
    files: ['**/*.{js,mjs,cjs}'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { ...globals.node } },
  },
);
