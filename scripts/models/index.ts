/**
 * The models this repo builds itself, in one registry: the built-in GloVe model that ships as the default
 * embedder, and the tiny random BERT test fixture. `npm run model` builds the first; `ensure-model` both.
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { GLOVE_DEFAULTS, GLOVE_MODEL_ID, gloveModelFiles, loadWink, winkPackage, type GloveOptions } from './glove.js';
import { TINY_BERT_MODEL_ID, tinyBertModelFiles } from './tiny-bert.js';
import { recipeHash, type ModelFiles } from './model-folder.js';

/** The repo's models/ folder: the same place `createEmbedder` looks in Node by default. */
export const MODELS_ROOT = fileURLToPath(new URL('../../models/', import.meta.url));

export interface ModelRecipe {
  id: string;
  /** Changes whenever the builder's code or inputs change, so a stale folder is rebuilt. */
  recipe(): string;
  files(): ModelFiles;
}

const source = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const SHARED_SOURCES = ['./onnx.ts', './bert-files.ts', './model-folder.ts'].map(source);

export function gloveRecipe(options: GloveOptions = GLOVE_DEFAULTS): ModelRecipe {
  return {
    id: GLOVE_MODEL_ID,
    recipe: () => recipeHash([...SHARED_SOURCES, source('./glove.ts'), source('./sif-common.ts')], [winkPackage().version, JSON.stringify(options)]),
    files: () => gloveModelFiles(loadWink(), options, winkPackage().version),
  };
}

export const tinyBertRecipe: ModelRecipe = {
  id: TINY_BERT_MODEL_ID,
  recipe: () => recipeHash([...SHARED_SOURCES, source('./tiny-bert.ts')]),
  files: tinyBertModelFiles,
};

export function modelDir(id: string, root = MODELS_ROOT): string {
  return join(root, ...id.split('/'));
}
