/**
 * `consolidate`, in the seeds' two forms (docs/formation.md). Without a model: live near-duplicates (calibrated
 * cosine ≥ the supersede threshold) fold into the newest of them. With one: a cluster of live memories about one
 * subject (a seed, the memories most similar to it and those the association graph ties to it) becomes one summary
 * memory that supersedes them and links `derives_from` to each. Both stay within one project and scope, and leave
 * pinned memories live unless the caller allows otherwise. Nothing is deleted: every original stays reachable
 * by deep recall and `why`. The plan is made outside the write queue; the write is one commit (formation-write.ts).
 */
import { invalidInput } from '../errors.js';
import { askLlm, errorText } from '../search/llm-stage.js';
import type { LanguageModel } from '../llm/types.js';
import type { RecordSummary } from '../store/store.js';
import type { ConsolidateOptions, ConsolidateResult, FormationFallback, Link, MemoryRecord } from '../types.js';
import { checkSignal, throwIfAborted, type CallAbort } from '../util/abort.js';
import { describeValue } from '../util/describe.js';
import type { VectorIndex } from '../vector/vector-index.js';
import type { AssociationGraph } from './associations.js';
import { FORMATION_TIMEOUT_MS, NO_MODEL, SUMMARY_KIND, TURN_KIND, TokenTally, checkTimeout, fallbackOf, sameHome, type FormationWrite, type FormationWritten } from './formation.js';
import { SUMMARIZE_SCHEMA, parseSummary, summarizePrompt } from './formation-prompts.js';
import type { RecordTable } from './record-table.js';
import { passingFloor } from './supersede.js';
import { recordFromInput, type RecordLimits } from './validate.js';

/** Matches kept per memory when folding: more wait for the next consolidation. */
const FOLD_PROBE = 32;
/** Memories asked about at once (the vectors of one chunk are held together). */
const CHUNK = 256;
const SUMMARY_MAX_TOKENS = 400;

export interface ConsolidationParts {
  llm: LanguageModel | null;
  clock(): number;
  limits: RecordLimits;
  records: RecordTable;
  index: VectorIndex | null;
  associations: AssociationGraph;
  supersedeThreshold: number | false;
  calibrate: boolean;
  write(change: FormationWrite): Promise<FormationWritten>;
}

interface Resolved {
  summarize: boolean;
  clusterSimilarity: number;
  minCluster: number;
  maxCluster: number;
  maxClusters: number;
  timeoutMs: number;
  supersedePinned: boolean;
  signal: AbortSignal | undefined;
}

export async function consolidate(parts: ConsolidationParts, options: unknown = {}): Promise<ConsolidateResult> {
  const started = performance.now();
  const opts = checkConsolidateOptions(options);
  const abort: CallAbort = { signal: opts.signal, method: 'consolidate' };
  const tally = new TokenTally();
  const now = parts.clock();
  const change: FormationWrite = { created: [], supersede: new Map(), links: [], reinforce: [], supersedePinned: opts.supersedePinned, abort };
  const index = parts.index;
  // Newest first: a memory folds the older near-duplicates it finds, and a seed gathers a cluster around it.
  const live = [...parts.records.summaryValues()].filter((s) => s.supersededBy === undefined && index?.has(s.id)).sort((a, b) => b.createdAt - a.createdAt);
  const baseline = parts.calibrate && index ? index.meanPairwiseCosine() : 0;

  if (index && parts.supersedeThreshold !== false) await fold(index, live, passingFloor(parts.supersedeThreshold, baseline), change.supersede);
  throwIfAborted(abort.signal, abort.method);

  let fallback: FormationFallback | undefined;
  const summaries: ConsolidateResult['summaries'] = [];
  if (opts.summarize && !parts.llm) fallback = NO_MODEL;
  else if (opts.summarize && index) {
    const clusters = await clustersOf(parts, index, live.filter((s) => !change.supersede.has(s.id) && s.kind !== TURN_KIND).map((s) => s.id), passingFloor(opts.clusterSimilarity, baseline), opts, now);
    for (const ids of clusters) {
      // A pinned memory is left out of a summary that would supersede it; the rest may still be one.
      const members = (await parts.records.getMany(ids)).filter((m) => opts.supersedePinned || !m.pinned);
      if (members.length < opts.minCluster) continue;
      const answer = await askLlm(parts.llm as LanguageModel, {
        prompt: summarizePrompt(members),
        maxTokens: SUMMARY_MAX_TOKENS,
        timeoutMs: opts.timeoutMs,
        responseConstraint: SUMMARIZE_SCHEMA,
        parse: parseSummary,
        abort,
      });
      tally.add(answer.usage);
      if (!answer.ok) {
        // The folds still happen; the summaries wait for a model that answers.
        fallback = fallbackOf(answer.failure, answer.note);
        break;
      }
      if (answer.value === null) continue;
      let summary: MemoryRecord;
      try {
        const { project, scope } = members[0]!;
        const home = { ...(project === undefined ? {} : { project }), ...(scope === undefined ? {} : { scope }) };
        // 'record': its date is its members' newest, stored already (an imported one may predate 1973).
        summary = recordFromInput({ ...home, text: answer.value, createdAt: Math.max(...members.map((m) => m.createdAt)), kind: SUMMARY_KIND, meta: { formation: 'summary' } }, now, parts.limits, 'summary', 'record');
      } catch (error) {
        fallback = fallbackOf('unreadable', `the language model's answer could not be read: ${errorText(error)}`);
        break;
      }
      change.created.push(summary);
      for (const member of members) {
        change.supersede.set(member.id, summary.id);
        change.links.push({ from: summary.id, to: member.id, kind: 'derives_from', confidence: 1, createdAt: now } satisfies Link);
      }
      summaries.push({ id: summary.id, text: summary.text, from: members.map((m) => m.id) });
    }
  }
  const written = await parts.write(change);
  const summaryIds = new Set(summaries.map((s) => s.id));
  const folded = [...written.superseded].filter(([, into]) => !summaryIds.has(into)).map(([id, into]) => ({ id, into }));
  const kept = [...written.refused].flatMap(([id, why]) => (why === 'pinned' ? [{ id, into: change.supersede.get(id)!, why }] : []));
  return { folded, summaries, kept, tokens: tally.tokens, ...(fallback ? { fallback } : {}), ms: performance.now() - started };
}

/**
 * Marks each live memory's older near-duplicates (cosine ≥ `floor`) of its project and scope as superseded by it,
 * newest first. The write refuses the marks on pinned memories (unless allowed).
 */
async function fold(index: VectorIndex, live: readonly RecordSummary[], floor: number, marks: Map<string, string>): Promise<void> {
  const byId = new Map(live.map((s) => [s.id, s]));
  const keepers = new Set<string>();
  for (let start = 0; start < live.length; start += CHUNK) {
    const chunk = live.slice(start, start + CHUNK).filter((s) => !marks.has(s.id));
    const found = await index.matchesAboveAsync(await vectorsOf(index, chunk.map((s) => s.id)), floor, FOLD_PROBE);
    chunk.forEach((memory, i) => {
      if (marks.has(memory.id)) return;
      keepers.add(memory.id);
      for (const { id } of found[i]!.matches) {
        const match = byId.get(id);
        if (id === memory.id || match === undefined || match.createdAt > memory.createdAt || keepers.has(id) || marks.has(id) || !sameHome(match, memory)) continue;
        marks.set(id, memory.id);
      }
    });
  }
}

/** Clusters of ids about one subject: each seed with its most similar memories and its associations, unclaimed ones only. */
async function clustersOf(parts: ConsolidationParts, index: VectorIndex, ids: readonly string[], floor: number, opts: Resolved, now: number): Promise<string[][]> {
  const eligible = new Set(ids);
  const claimed = new Set<string>();
  const clusters: string[][] = [];
  for (let start = 0; start < ids.length && clusters.length < opts.maxClusters; start += CHUNK) {
    const chunk = ids.slice(start, start + CHUNK);
    const found = await index.matchesAboveAsync(await vectorsOf(index, chunk), floor, opts.maxCluster * 2);
    chunk.forEach((seed, i) => {
      const home = parts.records.summary(seed);
      const near = (id: string) => {
        const other = parts.records.summary(id);
        return home !== undefined && other !== undefined && sameHome(home, other);
      };
      if (claimed.has(seed) || clusters.length >= opts.maxClusters) return;
      const similar = found[i]!.matches.map((m) => m.id);
      const associated = parts.associations.related(seed, now).map((a) => a.id);
      const members = [seed, ...new Set([...similar, ...associated])].filter((id, j, all) => eligible.has(id) && !claimed.has(id) && near(id) && all.indexOf(id) === j).slice(0, opts.maxCluster);
      if (members.length < opts.minCluster) return;
      members.forEach((id) => claimed.add(id));
      clusters.push(members);
    });
  }
  return clusters;
}

async function vectorsOf(index: VectorIndex, ids: readonly string[]): Promise<Float32Array[]> {
  const exact = index.isCompact ? await index.exactVectors(ids) : null;
  return ids.map((id) => (exact ? exact.get(id) : index.get(id)) ?? new Float32Array(index.dim));
}

function checkConsolidateOptions(options: unknown): Resolved {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidInput(`consolidate options must be an object, got ${describeValue(options)}`);
  const o = options as ConsolidateOptions;
  const { summarize = true, clusterSimilarity = 0.5, minCluster = 3, maxCluster = 8, maxClusters = 10, timeoutMs = FORMATION_TIMEOUT_MS, supersedePinned = false, signal } = o;
  if (typeof summarize !== 'boolean') throw invalidInput(`consolidate option summarize must be a boolean, got ${describeValue(summarize)}`);
  if (typeof supersedePinned !== 'boolean') throw invalidInput(`consolidate option supersedePinned must be a boolean, got ${describeValue(supersedePinned)}`);
  if (typeof clusterSimilarity !== 'number' || !Number.isFinite(clusterSimilarity)) throw invalidInput(`consolidate option clusterSimilarity must be a number, got ${describeValue(clusterSimilarity)}`);
  const int = (value: unknown, name: string, min: number): number => {
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > 1000) throw invalidInput(`consolidate option ${name} must be an integer from ${min} to 1000, got ${describeValue(value)}`);
    return value as number;
  };
  const resolved = { summarize, clusterSimilarity, minCluster: int(minCluster, 'minCluster', 2), maxCluster: int(maxCluster, 'maxCluster', 2), maxClusters: int(maxClusters, 'maxClusters', 0), timeoutMs: checkTimeout(timeoutMs, 'consolidate'), supersedePinned, signal: checkSignal(signal, 'consolidate') };
  if (resolved.maxCluster < resolved.minCluster) throw invalidInput(`consolidate option maxCluster (${resolved.maxCluster}) is below minCluster (${resolved.minCluster})`);
  return resolved;
}
