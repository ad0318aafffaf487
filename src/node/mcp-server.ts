/**
 * engram-mcp's tools and resources: an MCP server (`@modelcontextprotocol/sdk`, an optional peer) over an
 * EngineLease, so every call runs on the database file and a write is answered only once committed. A server may
 * be confined to a project and a scope (every read filtered to them, every write stamped with them) and to reading;
 * `forget` moves memories to a trash the user can restore from (trash.ts).
 */
import { McpServer, type ReadResourceCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { EngramError, ErrorCode, invalidInput, isEngramError } from '../errors.js';
import { checkKnownKeys } from '../util/keys.js';
import type { Engine } from '../engine/engine.js';
import { compileEligibility } from '../search/filter.js';
import { MAX_K, type SearchFilter, type SearchOptions } from '../search/options.js';
import type { Store } from '../store/store.js';
import type { Hit, MemoryInput, MemoryRecord } from '../types.js';
import type { EngineLease } from './engine-lease.js';
import { Trash } from './trash.js';

export interface McpServerOptions {
  /** Only this project's memories are read, and every write is stamped with it (`--project`). */
  project?: string;
  /**
   * Only memories of this scope are read, as `filter.scope` matches them (`'personal'` also matches memories with
   * no scope), and every write is stamped with it (`--scope`).
   */
  scope?: string;
  /** No tool that writes is offered, and searches record no access (`--read-only`). */
  readOnly?: boolean;
  /** Days a forgotten memory stays restorable (`--trash-days`). Default 30. */
  trashDays?: number;
}

/** What a server confined by McpServerOptions may see, and stamps on what it writes. */
export class Confinement {
  readonly project: string | undefined;
  readonly scope: string | undefined;
  readonly readOnly: boolean;
  readonly trashDays: number;
  readonly trash: Trash;
  private readonly matches: (record: MemoryRecord) => boolean;

  constructor(options: McpServerOptions = {}) {
    const { project, scope } = options;
    for (const [flag, value] of [['project', project], ['scope', scope]] as const) {
      if (value !== undefined && (typeof value !== 'string' || value.trim() === '')) throw invalidInput(`engram-mcp: --${flag} takes a non-empty name`);
    }
    if (scope === 'both') throw invalidInput("engram-mcp: --scope takes one scope to stamp on writes ('personal', 'shared' or your own), not 'both'");
    this.project = project;
    this.scope = scope;
    this.readOnly = options.readOnly === true;
    this.trashDays = options.trashDays ?? 30;
    this.trash = new Trash(this.trashDays);
    // The engine's own filter, without its expiry and supersede rules: a confined server sees what its filter would.
    const filter: SearchFilter = this.filter();
    const check = compileEligibility({ filter, deepRecall: true, includeExpiredInDeepRecall: true, now: 0 });
    this.matches = check ?? (() => true);
  }

  /** The hard filter every search gets. */
  filter(): SearchFilter {
    const filter: SearchFilter = {};
    if (this.project !== undefined) filter.project = this.project;
    if (this.scope !== undefined) filter.scope = this.scope;
    return filter;
  }

  visible = (record: MemoryRecord): boolean => this.matches(record);

  /** The memory, or NOT_FOUND, as for an unknown id, when it is outside what this server may see. */
  async get(engine: Engine, id: string): Promise<MemoryRecord> {
    const record = await engine.get(id);
    if (!record || !this.visible(record)) throw new EngramError(ErrorCode.NOT_FOUND, `no memory with id "${id}"`, { details: { id } });
    return record;
  }

  /** A client's `project` on a write: none or this server's own. */
  stamp(input: MemoryInput, project: string | undefined): MemoryInput {
    if (this.project !== undefined && project !== undefined && project !== this.project) {
      throw invalidInput(`this server writes to project "${this.project}" only (engram-mcp --project), not "${project}"`);
    }
    const stamped = { ...input };
    const chosen = this.project ?? project;
    if (chosen !== undefined) stamped.project = chosen;
    if (this.scope !== undefined) stamped.scope = this.scope;
    return stamped;
  }

  /** A client's `filter.projects` on a search: every one must be this server's project. */
  projects(requested: string[] | undefined): string[] | undefined {
    if (this.project === undefined || requested === undefined) return requested;
    const others = requested.filter((project) => project !== this.project);
    if (others.length > 0) throw invalidInput(`this server reads project "${this.project}" only (engram-mcp --project), not ${others.map((p) => `"${p}"`).join(', ')}`);
    return requested;
  }
}

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
const idsShape = (what: string) => ({ ids: z.array(id).min(1).describe(`Ids of the memories to ${what}.`) });
const forgetShape = idsShape('forget');
const restoreShape = idsShape('restore (the ids forgotten listed)');
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

/** `confinement`: the options, or the Confinement the caller made of them (engram-mcp's, shared with its commands). */
export function createMcpServer(lease: EngineLease, version: string, confinement: McpServerOptions | Confinement = {}): McpServer {
  const confined = confinement instanceof Confinement ? confinement : new Confinement(confinement);
  const { trash, visible, trashDays: days } = confined;
  const server = new McpServer({ name: 'engram', version });
  /**
   * A tool's body on the lease. `shape` is the tool's input schema, whose keys are the only arguments it takes: an
   * object schema would drop any other without a word, so the schemas are loose and this refuses them by name.
   */
  const call = <A>(shape: z.ZodRawShape, body: (engine: Engine, args: A, store: Store) => Promise<CallToolResult>, writes = false) => async (args: A): Promise<CallToolResult> => {
    try {
      checkArguments(args, shape);
      return await lease.use((engine, store) => body(engine, args, store), { writes });
    } catch (error) {
      return toolError(error);
    }
  };
  // A read-only server does not offer the tools that write: a client cannot call what it is not shown.
  const writer: typeof server.registerTool = (...args) => (confined.readOnly ? undefined : server.registerTool(...args)) as ReturnType<typeof server.registerTool>;

  writer('remember', {
    description: 'Store a fact, preference or decision in long-term memory, to be recalled in later conversations. Returns its id.',
    inputSchema: z.looseObject(rememberShape),
  }, call(rememberShape, async (engine, { text, tags, project }: { text: string; tags?: string[]; project?: string }) => {
    const input: MemoryInput = { text };
    if (tags !== undefined) input.tags = tags;
    const [stored] = await engine.add(confined.stamp(input, project));
    return json({ id: stored });
  }, true));

  server.registerTool('recall', {
    description:
      'Search long-term memory (keywords and meaning). Returns a dated context block of the best memories, then the hits as JSON with their ids and how each was ranked (explain).',
    inputSchema: z.looseObject(recallShape),
  }, call(recallShape, async (engine, { query, k, project, filter }: { query: string; k?: number; project?: string; filter?: { projects?: string[]; tags?: string[]; since?: string | number; until?: string | number } }) => {
    const search: Partial<SearchOptions> = {};
    // A read-only client leaves no trace either: no access counts, reinforcement or associations from its searches.
    if (confined.readOnly) search.touch = false;
    if (k !== undefined) search.k = k;
    if (project !== undefined) search.project = project;
    const { projects, ...rest } = filter ?? {};
    const hard: SearchFilter = { ...rest, ...confined.filter() };
    const allowed = confined.projects(projects);
    if (allowed !== undefined && confined.project === undefined) hard.project = allowed;
    if (Object.keys(hard).length > 0) search.filter = hard;
    const { hits, context, trace } = await engine.search(query, search);
    const summary = { mode: trace.mode, context: { tokens: context.tokens, budget: context.budget, ids: context.ids }, hits: hits.map(hitOf) };
    return { content: [{ type: 'text', text: context.text || 'No memory matches.' }, { type: 'text', text: JSON.stringify(summary, null, 2) }] };
  }));

  writer('forget', {
    description: `Forget memories by id (the ids recall returned), when the user asks to forget them or they are wrong. They leave recall at once; the user can restore them for ${days} days.`,
    inputSchema: z.looseObject(forgetShape),
  }, call(forgetShape, async (engine, { ids }: { ids: string[] }, store) => {
    const records: MemoryRecord[] = [];
    for (const memory of new Set(ids)) {
      const record = await engine.get(memory);
      if (record && visible(record)) records.push(record);
    }
    return json({ removed: await trash.forget(engine, store, records), restorableDays: days });
  }, true));

  server.registerTool('forgotten', {
    description: `The memories forgotten in the last ${days} days, most recent first, with their ids for restore.`,
    inputSchema: z.looseObject({}),
  }, call({}, async (_engine, _args: Record<string, unknown>, store) => {
    const entries = await trash.list(store, visible);
    return json(entries.map((entry) => ({ ...brief(entry.record), forgottenAt: new Date(entry.forgottenAt).toISOString() })));
  }));

  writer('restore', {
    description: 'Bring back forgotten memories by id (the ids forgotten listed).',
    inputSchema: z.looseObject(restoreShape),
  }, call(restoreShape, async (engine, { ids }: { ids: string[] }, store) => json(await trash.restore(engine, store, ids, visible)), true));

  writer('pin', {
    description: 'Pin a memory (listed in engram://memories/pinned), or unpin it with pinned: false.',
    inputSchema: z.looseObject(pinShape),
  }, call(pinShape, async (engine, { id: memory, pinned }: { id: string; pinned?: boolean }) => {
    await confined.get(engine, memory);
    return json(brief(await engine.pin(memory, pinned ?? true)));
  }));

  server.registerTool('timeline', {
    description: 'The memories stored just before and after one memory: in its thread, or by date when it has none.',
    inputSchema: z.looseObject(timelineShape),
  }, call(timelineShape, async (engine, { id: memory, ...around }: { id: string; before?: number; after?: number }) => {
    await confined.get(engine, memory);
    const { anchor, before, after, by } = await engine.timeline(memory, around);
    // Neighbours outside what this server sees are left out (so a confined timeline may be shorter).
    return json({ by, before: before.filter(visible).map(brief), anchor: brief(anchor), after: after.filter(visible).map(brief) });
  }));

  server.registerTool('why', {
    description: 'The provenance of a memory: the links (causes, derives_from, edits…) reached from it, and the memories they join.',
    inputSchema: z.looseObject(whyShape),
  }, call(whyShape, async (engine, { id: memory, ...around }: { id: string; depth?: number; direction?: 'out' | 'in' | 'both' }) => {
    await confined.get(engine, memory);
    const { root, edges, memories, truncated } = await engine.why(memory, around);
    // A link to a memory this server may not see is left out with it: its id would say it exists.
    const shown = new Set([root.id, ...memories.filter(visible).map((record) => record.id)]);
    return json({ root: brief(root), edges: edges.filter((edge) => shown.has(edge.from) && shown.has(edge.to)), memories: memories.filter(visible).map(brief), truncated });
  }));

  const listing = (select: (records: MemoryRecord[], now: number) => MemoryRecord[]): ReadResourceCallback => async (uri) => {
    const records = await lease.use(async (engine) => select((await engine.export()).filter(visible), Date.now()));
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
