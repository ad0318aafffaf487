/**
 * engram-mcp's tools and resources: an MCP server (`@modelcontextprotocol/sdk`, an optional peer) over an
 * EngineLease, so every call runs on the database file and a write is answered only once committed.
 */
import { McpServer, type ReadResourceCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isEngramError } from '../errors.js';
import { checkKnownKeys } from '../util/keys.js';
import type { Engine } from '../engine/engine.js';
import { MAX_K, type SearchFilter, type SearchOptions } from '../search/options.js';
import type { Hit, MemoryInput, MemoryRecord } from '../types.js';
import type { EngineLease } from './engine-lease.js';

/** Memories the `engram://memories/recent` resource lists. */
const RECENT = 20;

/** A memory as the tools return it: what a model reads, without the bookkeeping (access counts, sessions). */
function brief(record: MemoryRecord) {
  const { id, text, project, tags, kind, pinned, supersededBy } = record;
  return { id, text, createdAt: new Date(record.createdAt).toISOString(), project, tags, kind, pinned, supersededBy };
}

function hitOf(hit: Hit) {
  return { ...brief(hit.memory), score: hit.score, explain: hit.explain };
}

const json = (value: unknown): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] });

/** An Engram error reaches the client as a tool error that starts with its code (`NOT_FOUND: …`). */
function toolError(error: unknown): CallToolResult {
  const text = isEngramError(error) ? `${error.code}: ${error.message}` : `ERROR: ${error instanceof Error ? error.message : String(error)}`;
  return { isError: true, content: [{ type: 'text', text }] };
}

const id = z.string().min(1).describe('A memory id, as remember or recall returned it.');
const date = z.union([z.string(), z.number()]).describe('An ISO-8601 date (YYYY-MM-DD or a full timestamp) or epoch ms.');

const rememberShape = {
  text: z.string().min(1).describe('The memory, as one self-contained sentence.'),
  tags: z.array(z.string().min(1)).optional().describe('Short labels to file it under.'),
  project: z.string().min(1).optional().describe('The project it belongs to, if any.'),
};
const filterShape = {
  projects: z.array(z.string().min(1)).optional().describe('Only memories of these projects.'),
  tags: z.array(z.string().min(1)).optional().describe('Only memories carrying every one of these tags.'),
  since: date.optional(),
  until: date.optional(),
};
const recallShape = {
  query: z.string().min(1).describe('What to look for, in natural language.'),
  k: z.number().int().min(1).max(MAX_K).optional().describe('How many memories at most (default 5).'),
  project: z.string().min(1).optional().describe("The current project: its memories rank higher (others are still found)."),
  filter: z.looseObject(filterShape).optional().describe('Hard filters: memories outside them are never returned.'),
};
const forgetShape = { ids: z.array(id).min(1).describe('Ids of the memories to delete.') };
const pinShape = { id, pinned: z.boolean().optional().describe('Default true.') };
const timelineShape = {
  id,
  before: z.number().int().min(0).max(100).optional().describe('Memories before it (default 3).'),
  after: z.number().int().min(0).max(100).optional().describe('Memories after it (default 3).'),
};
const whyShape = {
  id,
  depth: z.number().int().min(1).max(10).optional().describe('Hops to follow (default 4).'),
  direction: z.enum(['out', 'in', 'both']).optional().describe("Follow links out of each memory, into it, or both (default 'out')."),
};

/** INVALID_INPUT for an argument the tool's schema does not have (and in `filter`, a field it does not have). */
function checkArguments(args: unknown, shape: z.ZodRawShape): void {
  const aliases = { limit: 'k', topk: 'k', top_k: 'k', content: 'text', tag: 'tags', memory: 'id', ids: 'id' };
  checkKnownKeys(args, Object.keys(shape), { noun: 'argument', aliases });
  if (shape === recallShape) checkKnownKeys((args as { filter?: unknown }).filter, Object.keys(filterShape), { noun: 'argument', prefix: 'filter.', aliases: { project: 'projects', tag: 'tags' } });
}

export function createMcpServer(lease: EngineLease, version: string): McpServer {
  const server = new McpServer({ name: 'engram', version });
  /**
   * A tool's body on the lease. `shape` is the tool's input schema, whose keys are the only arguments it takes: an
   * object schema would drop any other without a word, so the schemas are loose and this refuses them by name.
   */
  const call = <A>(shape: z.ZodRawShape, body: (engine: Engine, args: A) => Promise<CallToolResult>, writes = false) => async (args: A): Promise<CallToolResult> => {
    try {
      checkArguments(args, shape);
      return await lease.use((engine) => body(engine, args), { writes });
    } catch (error) {
      return toolError(error);
    }
  };

  server.registerTool('remember', {
    description: 'Store a fact, preference or decision in long-term memory, to be recalled in later conversations. Returns its id.',
    inputSchema: z.looseObject(rememberShape),
  }, call(rememberShape, async (engine, { text, tags, project }: { text: string; tags?: string[]; project?: string }) => {
    const input: MemoryInput = { text };
    if (tags !== undefined) input.tags = tags;
    if (project !== undefined) input.project = project;
    const [stored] = await engine.add(input);
    return json({ id: stored });
  }, true));

  server.registerTool('recall', {
    description:
      'Search long-term memory (keywords and meaning). Returns a dated context block of the best memories, then the hits as JSON with their ids and how each was ranked (explain).',
    inputSchema: z.looseObject(recallShape),
  }, call(recallShape, async (engine, { query, k, project, filter }: { query: string; k?: number; project?: string; filter?: { projects?: string[]; tags?: string[]; since?: string | number; until?: string | number } }) => {
    const options: Partial<SearchOptions> = {};
    if (k !== undefined) options.k = k;
    if (project !== undefined) options.project = project;
    if (filter) {
      const { projects, ...rest } = filter;
      const hard: SearchFilter = { ...rest };
      if (projects !== undefined) hard.project = projects;
      options.filter = hard;
    }
    const { hits, context, trace } = await engine.search(query, options);
    const summary = { mode: trace.mode, context: { tokens: context.tokens, budget: context.budget, ids: context.ids }, hits: hits.map(hitOf) };
    return { content: [{ type: 'text', text: context.text || 'No memory matches.' }, { type: 'text', text: JSON.stringify(summary, null, 2) }] };
  }));

  server.registerTool('forget', {
    description: 'Delete memories by id (the ids recall returned), when the user asks to forget them or they are wrong.',
    inputSchema: z.looseObject(forgetShape),
  }, call(forgetShape, async (engine, { ids }: { ids: string[] }) => json({ removed: await engine.remove(ids) }), true));

  server.registerTool('pin', {
    description: 'Pin a memory (listed in engram://memories/pinned), or unpin it with pinned: false.',
    inputSchema: z.looseObject(pinShape),
  }, call(pinShape, async (engine, { id: memory, pinned }: { id: string; pinned?: boolean }) => json(brief(await engine.pin(memory, pinned ?? true)))));

  server.registerTool('timeline', {
    description: 'The memories stored just before and after one memory: in its thread, or by date when it has none.',
    inputSchema: z.looseObject(timelineShape),
  }, call(timelineShape, async (engine, { id: memory, ...around }: { id: string; before?: number; after?: number }) => {
    const { anchor, before, after, by } = await engine.timeline(memory, around);
    return json({ by, before: before.map(brief), anchor: brief(anchor), after: after.map(brief) });
  }));

  server.registerTool('why', {
    description: 'The provenance of a memory: the links (causes, derives_from, edits…) reached from it, and the memories they join.',
    inputSchema: z.looseObject(whyShape),
  }, call(whyShape, async (engine, { id: memory, ...options }: { id: string; depth?: number; direction?: 'out' | 'in' | 'both' }) => {
    const { root, edges, memories, truncated } = await engine.why(memory, options);
    return json({ root: brief(root), edges, memories: memories.map(brief), truncated });
  }));

  const listing = (select: (records: MemoryRecord[], now: number) => MemoryRecord[]): ReadResourceCallback => async (uri) => {
    const records = await lease.use(async (engine) => select(await engine.export(), Date.now()));
    return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(records.map(brief), null, 2) }] };
  };
  const live = (record: MemoryRecord, now: number) => record.supersededBy === undefined && (record.validUntil === undefined || record.validUntil > now);

  server.registerResource('recent', 'engram://memories/recent', {
    description: `The ${RECENT} most recent memories (superseded and expired ones left out), newest first.`,
    mimeType: 'application/json',
  }, listing((records, now) => records.filter((r) => live(r, now)).sort((a, b) => b.createdAt - a.createdAt).slice(0, RECENT)));

  server.registerResource('pinned', 'engram://memories/pinned', {
    description: 'Every pinned memory, newest first.',
    mimeType: 'application/json',
  }, listing((records) => records.filter((r) => r.pinned).sort((a, b) => b.createdAt - a.createdAt)));

  return server;
}
