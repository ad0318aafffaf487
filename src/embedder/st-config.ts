/**
 * What a model's sentence-transformers config asks of the pipeline: modules.json (which modules run, in order),
 * the Pooling module's config.json, config_sentence_transformers.json (prompts) and sentence_bert_config.json
 * (max_seq_length). Anything Engram cannot do is MODEL_INVALID here, at load, naming it: a model that loads but
 * embeds differently from how it was trained would fail silently in every search.
 */
import { EngramError, ErrorCode } from '../errors.js';
import type { EmbedderPrompts, Pooling } from './options.js';

/** The config files, parsed; null where the model has none. */
export interface SentenceTransformersFiles {
  modules: unknown;
  /** The Pooling module's `config.json` (usually `1_Pooling/config.json`). */
  pooling: unknown;
  config: unknown;
  bertConfig: unknown;
}

export interface SentenceTransformersSetup {
  /** The pooling the config asks for; undefined without a Pooling module. */
  pooling?: Pooling;
  /** A Dense module runs after pooling: only the ONNX `sentence_embedding` output has it. */
  dense: boolean;
  prompts: Required<EmbedderPrompts>;
  maxSeqLength?: number;
}

const MODULE = 'sentence_transformers.models.';
/** Modules the ONNX export or Engram's own steps cover. Dense and Normalize are in `sentence_embedding`, if anywhere. */
const KNOWN_MODULES = new Set(['Transformer', 'Pooling', 'Dense', 'Normalize']);

/** Role → prompt names, most specific first; sentence-transformers' `encode_query`/`encode_document` use the first two. */
const PROMPT_NAMES: Record<keyof EmbedderPrompts, string[]> = {
  query: ['query', 'search_query', 'retrieval.query'],
  document: ['document', 'passage', 'search_document', 'corpus', 'retrieval.passage'],
};

function invalid(model: string, what: string): EngramError {
  return new EngramError(ErrorCode.MODEL_INVALID, `model "${model}": ${what}, which Engram cannot do`, { details: { model } });
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The Pooling module's folder, from modules.json; undefined when it has none. */
export function poolingModulePath(modules: unknown): string | undefined {
  if (!Array.isArray(modules)) return undefined;
  const pooling = modules.map(record).find((m) => m.type === `${MODULE}Pooling`);
  return typeof pooling?.path === 'string' ? pooling.path.replace(/\/+$/, '') : undefined;
}

export function readSentenceTransformers(model: string, files: SentenceTransformersFiles): SentenceTransformersSetup {
  const modules = Array.isArray(files.modules) ? files.modules.map(record) : [];
  for (const module of modules) {
    const type = typeof module.type === 'string' ? module.type : String(module.type);
    if (!type.startsWith(MODULE) || !KNOWN_MODULES.has(type.slice(MODULE.length))) throw invalid(model, `modules.json asks for the module ${type}`);
  }
  const has = (name: string) => modules.some((m) => m.type === `${MODULE}${name}`);
  const setup: SentenceTransformersSetup = { dense: has('Dense'), prompts: promptsOf(files.config) };
  if (has('Pooling')) setup.pooling = poolingOf(model, record(files.pooling));
  const maxSeqLength = record(files.bertConfig).max_seq_length ?? record(files.config).max_seq_length;
  if (typeof maxSeqLength === 'number' && Number.isInteger(maxSeqLength) && maxSeqLength > 0) setup.maxSeqLength = maxSeqLength;
  return setup;
}

/** Exactly one supported mode, else MODEL_INVALID naming what is asked (several modes at once are concatenated). */
function poolingOf(model: string, config: Record<string, unknown>): Pooling {
  const modes = Object.keys(config).filter((key) => key.startsWith('pooling_mode_') && config[key] === true);
  if (config.include_prompt === false) throw invalid(model, 'its Pooling config leaves the prompt out of the pooling (include_prompt: false)');
  if (modes.length !== 1) throw invalid(model, `its Pooling config asks for ${modes.length === 0 ? 'no pooling mode' : modes.join(' + ')}`);
  const supported: Record<string, Pooling> = { pooling_mode_mean_tokens: 'mean', pooling_mode_cls_token: 'cls', pooling_mode_lasttoken: 'lasttoken' };
  const pooling = supported[modes[0] as string];
  if (!pooling) throw invalid(model, `its Pooling config asks for ${modes[0]}`);
  return pooling;
}

function promptsOf(config: unknown): Required<EmbedderPrompts> {
  const { prompts, default_prompt_name: defaultName } = record(config);
  const table = record(prompts);
  const text = (name: unknown) => (typeof name === 'string' && typeof table[name] === 'string' ? (table[name] as string) : undefined);
  const fallback = text(defaultName) ?? '';
  return {
    query: PROMPT_NAMES.query.map(text).find((p) => p !== undefined) ?? fallback,
    document: PROMPT_NAMES.document.map(text).find((p) => p !== undefined) ?? fallback,
  };
}
