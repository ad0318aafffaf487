/** `engram/ai-sdk`: AI SDK tools that remember, recall and forget. Needs `ai` and `zod` (peers). */
import { tool, type Tool } from 'ai';
import { z } from 'zod';
import { MAX_K } from '../search/options.js';
import type { MemoryInput } from '../types.js';
import { MEMORY_INPUT_FIELDS } from '../engine/validate.js';
import { checkKnownKeys, keysOf, type KeySet } from '../util/keys.js';
import { checkAdapterOptions, checkMemory, type AdapterSearchOptions, type WritableMemory } from './searchable.js';

export type { WritableMemory } from './searchable.js';

export interface EngramToolsOptions {
  /** A `Memory` (`createMemory`) or an `Engine` (`createEngine`). */
  memory: WritableMemory;
  /** Options for every `recall` (`k`, `tokenBudget`, `filter`, …); the model's `k` and `project` (a boost) override them. */
  searchOptions?: Partial<AdapterSearchOptions>;
  /** Fields every remembered memory gets (`scope`, `kind`, …); the model's `tags` and `project` override them. */
  defaults?: Partial<Omit<MemoryInput, 'id' | 'text'>>;
}

export interface RememberInput {
  text: string;
  tags?: string[];
  project?: string;
}

export interface RememberOutput {
  id: string;
}

export interface RecallInput {
  query: string;
  k?: number;
  project?: string;
}

export interface RecallOutput {
  /** The token-budgeted context: one `[YYYY-MM-DD] text` block per memory. */
  context: string;
  /** What `context` costs, in tokens. */
  tokens: number;
  /** The hits' ids, best first: what `forget` takes. */
  ids: string[];
}

export interface ForgetInput {
  ids: string[];
}

export interface ForgetOutput {
  /** How many of the ids named a memory. */
  removed: number;
}

/** A type, not an interface: the AI SDK's `ToolSet` is an index signature, which only a type alias satisfies. */
export type EngramTools = {
  remember: Tool<RememberInput, RememberOutput>;
  recall: Tool<RecallInput, RecallOutput>;
  forget: Tool<ForgetInput, ForgetOutput>;
};

/** An object schema that keeps unknown keys for `execute` to refuse by name, typed as the plain object it must be. */
const loose = <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape) as unknown as z.ZodObject<T>;

const TOOLS_OPTION_KEYS = keysOf<EngramToolsOptions>({ memory: true, searchOptions: true, defaults: true } satisfies KeySet<EngramToolsOptions>);
// The tools' arguments: their schemas are loose, so that a name the model made up is refused by name here (an
// object schema would drop it without a word).
const REMEMBER_KEYS = keysOf<RememberInput>({ text: true, tags: true, project: true } satisfies KeySet<RememberInput>);
const RECALL_KEYS = keysOf<RecallInput>({ query: true, k: true, project: true } satisfies KeySet<RecallInput>);
const FORGET_KEYS = keysOf<ForgetInput>({ ids: true } satisfies KeySet<ForgetInput>);

/**
 * The three tools, for `generateText({ tools })` or `streamText({ tools })`. Invalid input from the model is
 * refused by the schemas; an Engram error (say a text over the length limit) reaches the model as a tool error.
 *
 * @example
 * ```ts
 * const { text } = await generateText({ model, tools: engramTools({ memory }), stopWhen: stepCountIs(4), prompt });
 * ```
 */
export function engramTools(options: EngramToolsOptions): EngramTools {
  checkAdapterOptions(options, TOOLS_OPTION_KEYS, 'engramTools');
  checkMemory(options?.memory, ['search', 'add', 'remove'], 'engramTools');
  const { memory, searchOptions = {}, defaults = {} } = options;
  checkKnownKeys(defaults, MEMORY_INPUT_FIELDS.filter((key) => key !== 'id' && key !== 'text'), { noun: 'field', prefix: 'defaults.' });
  return {
    remember: tool({
      description: 'Store a fact, preference or decision in long-term memory so it can be recalled in later conversations.',
      inputSchema: loose({
        text: z.string().min(1).describe('The memory, as one self-contained sentence.'),
        tags: z.array(z.string().min(1)).optional().describe('Short labels to file it under.'),
        project: z.string().min(1).optional().describe('The project it belongs to, if any.'),
      }),
      execute: async (input): Promise<RememberOutput> => {
        checkKnownKeys(input, REMEMBER_KEYS, { noun: 'argument', aliases: { content: 'text', tag: 'tags' } });
        const { text, tags, project } = input;
        const memoryInput: MemoryInput = { ...defaults, text };
        if (tags !== undefined) memoryInput.tags = tags;
        if (project !== undefined) memoryInput.project = project;
        const [id] = await memory.add(memoryInput);
        return { id: id! };
      },
    }),
    recall: tool({
      description: 'Search long-term memory. Returns the most relevant memories as a dated context block, and their ids.',
      inputSchema: loose({
        query: z.string().min(1).describe('What to look for, in natural language.'),
        k: z.number().int().min(1).max(MAX_K).optional().describe('How many memories at most.'),
        project: z.string().min(1).optional().describe('The current project: its memories rank higher.'),
      }),
      execute: async (input): Promise<RecallOutput> => {
        checkKnownKeys(input, RECALL_KEYS, { noun: 'argument', aliases: { limit: 'k', topk: 'k', top_k: 'k', q: 'query' } });
        const { query, k, project } = input;
        const opts: Partial<AdapterSearchOptions> = { ...searchOptions };
        if (k !== undefined) opts.k = k;
        if (project !== undefined) opts.project = project;
        const { hits, context } = await memory.search(query, opts);
        return { context: context.text, tokens: context.tokens, ids: hits.map((hit) => hit.id) };
      },
    }),
    forget: tool({
      description: 'Delete memories by id (the ids recall returned), when the user asks to forget them or they are wrong.',
      inputSchema: loose({ ids: z.array(z.string().min(1)).min(1).describe('Ids of the memories to delete.') }),
      execute: async (input): Promise<ForgetOutput> => {
        checkKnownKeys(input, FORGET_KEYS, { noun: 'argument', aliases: { id: 'ids' } });
        return { removed: await memory.remove(input.ids) };
      },
    }),
  };
}
