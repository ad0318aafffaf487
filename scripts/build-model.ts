/**
 * `npm run model`: builds the built-in embedding model into models/engram/glove-100d/ (deterministic: the same
 * bytes every time). Options, for experiments: --vocab N (words), --sif-a A, --common-component N (SIF's second step,
 * for N-word sentences), --models DIR (root folder), --tiny-bert (build the test fixture instead).
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { GLOVE_DEFAULTS } from './models/glove.js';
import { gloveRecipe, modelDir, MODELS_ROOT, tinyBertRecipe, type ModelRecipe } from './models/index.js';
import { writeModelFolder, type Manifest } from './models/model-folder.js';

export function buildModel(recipe: ModelRecipe, root = MODELS_ROOT): { dir: string; manifest: Manifest; ms: number } {
  const started = performance.now();
  const dir = modelDir(recipe.id, root);
  const manifest = writeModelFolder(dir, recipe.files(), recipe.recipe());
  return { dir, manifest, ms: performance.now() - started };
}

export function report({ dir, manifest, ms }: ReturnType<typeof buildModel>): string {
  const sizes = Object.entries(manifest.files)
    .map(([path, file]) => `  ${path.padEnd(28)} ${(file.bytes / 1e6).toFixed(2).padStart(7)} MB`)
    .join('\n');
  return `built ${dir} in ${(ms / 1000).toFixed(1)} s (build hash ${manifest.buildHash.slice(0, 16)})\n${sizes}`;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      vocab: { type: 'string' },
      'sif-a': { type: 'string' },
      'common-component': { type: 'string' },
      models: { type: 'string' },
      'tiny-bert': { type: 'boolean', default: false },
    },
  });
  const recipe = values['tiny-bert']
    ? tinyBertRecipe
    : gloveRecipe({
        vocabSize: values.vocab ? Number(values.vocab) : GLOVE_DEFAULTS.vocabSize,
        sifA: values['sif-a'] ? Number(values['sif-a']) : GLOVE_DEFAULTS.sifA,
        ...(values['common-component'] ? { commonComponentWords: Number(values['common-component']) } : {}),
      });
  console.log(report(buildModel(recipe, values.models ?? MODELS_ROOT)));
}

if (import.meta.url === `file://${process.argv[1]}`) main();
