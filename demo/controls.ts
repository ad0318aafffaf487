/**
 * Every search option as a labelled control. Initial values come from the library's `defaultSearchOptions`,
 * so the page always shows the real defaults; `toSearchOptions` turns the form back into options.
 */
import { defaultSearchOptions } from '../src/advanced.js';
import { DAY_MS } from '../src/internals.js';
import type { SearchOptions } from '../src/index.js';
import { CURRENCY_RATIO, DEFAULT_ASSOCIATIONS, DEFAULT_FEEDBACK } from '../src/search/options.js';
import { DEFAULT_STABILITY_DECAY } from '../src/search/retention.js';
import { DEFAULT_RULE_WEIGHTS } from '../src/search/rerank-rules.js';
import { h } from './dom.js';

export interface ControlState {
  mode: SearchOptions['mode'];
  k: number;
  candidatePool: number;
  fusion: SearchOptions['fusion'];
  rrfK: number;
  weightLexical: number;
  weightVector: number;
  topRankBonus: boolean;
  neighbours: boolean;
  neighbourWindow: number;
  neighbourWeight: number;
  neighbourLenders: number;
  /** `neighbours.time`: memories without a thread borrow from their neighbours in time. */
  neighbourTime: boolean;
  /** `neighbours.timeGapMs`, in minutes. */
  neighbourTimeGapMin: number;
  decayKind: 'hyperbolic' | 'exponential' | 'stability' | 'off';
  tauDays: number;
  halfLifeDays: number;
  /** `decay: { kind: 'stability' }`: β, the floor, and the floor of core memories. */
  betaDays: number;
  stabilityFloor: number;
  coreFloor: number;
  decayAlpha: number;
  decayFrom: SearchOptions['decayFrom'];
  decayScope: SearchOptions['decayScope'];
  /** yyyy-mm-dd, local. */
  now: string;
  project: string;
  projectSame: number;
  projectOther: number;
  projectNone: number;
  pinnedBoost: number;
  dateBoost: number;
  filterProject: string;
  filterKinds: string;
  filterTags: string;
  since: string;
  until: string;
  /** `filter.core`: 'core' = core memories only, 'other' = none of them. */
  filterCore: 'any' | 'core' | 'other';
  deepRecall: boolean;
  deepRecallPenalty: number;
  includeExpiredTransients: boolean;
  includeExpiredInDeepRecall: boolean;
  minScore: number;
  diversity: boolean;
  lambda: number;
  duplicateThreshold: number;
  tagWeight: number;
  /** Stage `currency`, with 'currency: false' when off. */
  currency: boolean;
  currencyRatio: number;
  raw: boolean;
  tokenBudget: number;
  touch: boolean;
  reinforce: boolean;
  /** Stage `associate`, with 'associations: false' when off. */
  associations: boolean;
  associationFloor: number;
  associationBridges: boolean;
  bridgeMinCosine: number;
  understand: SearchOptions['understand'];
  /** `synthesis`, with 'off' for `false` (a select holds strings). */
  synthesis: 'off' | 'offline' | 'llm';
  originalQueryWeight: number;
  listFusion: SearchOptions['listFusion'];
  hyde: boolean;
  /** Stage `feedback`, with 'feedback: false' when off. */
  feedback: boolean;
  feedbackDocs: number;
  feedbackTerms: number;
  feedbackOriginalWeight: number;
  /** `rerank.by`, with 'off' for `rerank: false`. */
  rerankBy: 'off' | 'rules' | 'llm' | 'hook';
  rerankInputLimit: number;
  /** `rerank.weights` of the rules re-ranker. */
  rerankCoverage: number;
  rerankProximity: number;
  llmTimeoutMs: number;
  assembly: SearchOptions['assembly'];
  qualityWeight: number;
}

type Key = keyof ControlState;

// Values a control shows when the default turns its feature off (e.g. τ while decay is hyperbolic).
const EXPONENTIAL_TAU_DAYS = 7;
const HYPERBOLIC_HALF_LIFE_DAYS = 60;
// duplicateThreshold 1 stands for none: only memories that say the same thing are dropped.
const MMR = { lambda: 1, duplicateThreshold: 1, tagWeight: 0.35 };
const NEIGHBOURS = { window: 2, weight: 0.5, lenders: 20, time: true, timeGapMs: 30 * 60_000 };
const MINUTE_MS = 60_000;
/** What `rerank` becomes when turned on (the library fills in the same `inputLimit` for a partial object). */
const RERANK_INPUT_LIMIT = 40;

export function localDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

export function defaultState(now = Date.now()): ControlState {
  const d = defaultSearchOptions;
  const decay = d.decay;
  const diversity = d.diversity;
  const neighbours = d.neighbours === false ? NEIGHBOURS : d.neighbours;
  const rerank = d.rerank;
  const stability = decay !== false && decay.kind === 'stability' ? { ...DEFAULT_STABILITY_DECAY, ...decay } : DEFAULT_STABILITY_DECAY;
  // What `associations` becomes when turned on: the library's own values.
  const associations = { ...DEFAULT_ASSOCIATIONS, ...(d.associations === false ? {} : d.associations) };
  const feedback = d.feedback === false ? DEFAULT_FEEDBACK : d.feedback;
  return {
    mode: d.mode,
    k: d.k,
    candidatePool: d.candidatePool,
    fusion: d.fusion,
    rrfK: d.rrfK,
    weightLexical: d.weights.lexical,
    weightVector: d.weights.vector,
    topRankBonus: d.topRankBonus,
    neighbours: d.neighbours !== false,
    neighbourWindow: neighbours.window,
    neighbourWeight: neighbours.weight,
    neighbourLenders: neighbours.lenders,
    neighbourTime: neighbours.time ?? NEIGHBOURS.time,
    neighbourTimeGapMin: (neighbours.timeGapMs ?? NEIGHBOURS.timeGapMs) / MINUTE_MS,
    decayKind: decay === false ? 'off' : decay.kind,
    tauDays: decay !== false && decay.kind === 'exponential' ? decay.tauMs / DAY_MS : EXPONENTIAL_TAU_DAYS,
    halfLifeDays: decay !== false && decay.kind === 'hyperbolic' ? decay.halfLifeDays : HYPERBOLIC_HALF_LIFE_DAYS,
    betaDays: stability.betaDays,
    stabilityFloor: stability.floor,
    coreFloor: stability.coreFloor,
    decayAlpha: d.decayAlpha,
    decayFrom: d.decayFrom,
    decayScope: d.decayScope,
    now: localDate(d.now ?? now),
    project: d.project ?? '',
    projectSame: d.projectBoost.same,
    projectOther: d.projectBoost.other,
    projectNone: d.projectBoost.none,
    pinnedBoost: d.pinnedBoost,
    dateBoost: d.dateBoost,
    filterProject: '',
    filterKinds: '',
    filterTags: '',
    since: '',
    until: '',
    filterCore: 'any',
    deepRecall: d.deepRecall,
    deepRecallPenalty: d.deepRecallPenalty,
    includeExpiredTransients: d.includeExpiredTransients,
    includeExpiredInDeepRecall: d.includeExpiredInDeepRecall,
    minScore: d.minScore,
    diversity: diversity !== false,
    lambda: diversity === false ? MMR.lambda : diversity.lambda,
    duplicateThreshold: diversity === false ? MMR.duplicateThreshold : (diversity.duplicateThreshold ?? MMR.duplicateThreshold),
    tagWeight: diversity === false ? MMR.tagWeight : (diversity.tagWeight ?? MMR.tagWeight),
    currency: d.currency !== false,
    currencyRatio: d.currency === false ? CURRENCY_RATIO : d.currency.ratio,
    raw: d.raw,
    tokenBudget: d.tokenBudget,
    // Live re-ranking would otherwise count every slider move as an access and change what it measures.
    touch: false,
    reinforce: d.reinforce,
    associations: d.associations !== false,
    associationFloor: associations.floor,
    associationBridges: associations.bridges,
    bridgeMinCosine: associations.bridgeMinCosine,
    understand: d.understand,
    synthesis: d.synthesis === false ? 'off' : d.synthesis,
    originalQueryWeight: d.originalQueryWeight,
    listFusion: d.listFusion,
    hyde: d.hyde,
    feedback: d.feedback !== false,
    feedbackDocs: feedback.docs,
    feedbackTerms: feedback.terms,
    feedbackOriginalWeight: feedback.originalWeight,
    rerankBy: rerank === false ? 'off' : rerank.by,
    rerankInputLimit: rerank === false ? RERANK_INPUT_LIMIT : rerank.inputLimit,
    rerankCoverage: rerank === false ? DEFAULT_RULE_WEIGHTS.coverage : (rerank.weights?.coverage ?? DEFAULT_RULE_WEIGHTS.coverage),
    rerankProximity: rerank === false ? DEFAULT_RULE_WEIGHTS.proximity : (rerank.weights?.proximity ?? DEFAULT_RULE_WEIGHTS.proximity),
    llmTimeoutMs: d.llmTimeoutMs,
    assembly: d.assembly,
    qualityWeight: d.qualityWeight,
  };
}

/** Epoch ms for a yyyy-mm-dd date: the present moment for today, otherwise noon of that day. */
export function dateToMs(date: string, now = Date.now()): number | undefined {
  if (!date) return undefined;
  if (date === localDate(now)) return now;
  const ms = new Date(`${date}T12:00`).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}

const list = (text: string) => text.split(',').map((t) => t.trim()).filter(Boolean);

export function toSearchOptions(s: ControlState): Partial<SearchOptions> {
  const filter: SearchOptions['filter'] = {};
  if (s.filterProject) filter.project = s.filterProject;
  if (list(s.filterKinds).length) filter.kinds = list(s.filterKinds);
  if (list(s.filterTags).length) filter.tags = list(s.filterTags);
  if (s.since) filter.since = new Date(`${s.since}T00:00`).getTime();
  if (s.until) filter.until = new Date(`${s.until}T23:59:59.999`).getTime();
  if (s.filterCore !== 'any') filter.core = s.filterCore === 'core';
  return {
    mode: s.mode,
    k: s.k,
    candidatePool: s.candidatePool,
    fusion: s.fusion,
    rrfK: s.rrfK,
    weights: { lexical: s.weightLexical, vector: s.weightVector },
    topRankBonus: s.topRankBonus,
    neighbours: s.neighbours
      ? { window: s.neighbourWindow, weight: s.neighbourWeight, lenders: s.neighbourLenders, time: s.neighbourTime, timeGapMs: s.neighbourTimeGapMin * MINUTE_MS }
      : false,
    decay:
      s.decayKind === 'off'
        ? false
        : s.decayKind === 'exponential'
          ? { kind: 'exponential', tauMs: s.tauDays * DAY_MS }
          : s.decayKind === 'stability'
            ? { kind: 'stability', betaDays: s.betaDays, floor: s.stabilityFloor, coreFloor: s.coreFloor }
            : { kind: 'hyperbolic', halfLifeDays: s.halfLifeDays },
    decayFrom: s.decayFrom,
    decayScope: s.decayScope,
    decayAlpha: s.decayAlpha,
    now: dateToMs(s.now),
    project: s.project || undefined,
    projectBoost: { same: s.projectSame, other: s.projectOther, none: s.projectNone },
    pinnedBoost: s.pinnedBoost,
    dateBoost: s.dateBoost,
    filter,
    deepRecall: s.deepRecall,
    includeExpiredTransients: s.includeExpiredTransients,
    includeExpiredInDeepRecall: s.includeExpiredInDeepRecall,
    deepRecallPenalty: s.deepRecallPenalty,
    minScore: s.minScore,
    diversity: s.diversity ? { lambda: s.lambda, ...(s.duplicateThreshold < 1 ? { duplicateThreshold: s.duplicateThreshold } : {}), tagWeight: s.tagWeight } : false,
    raw: s.raw,
    tokenBudget: s.tokenBudget,
    touch: s.touch,
    reinforce: s.reinforce,
    associations: s.associations ? { floor: s.associationFloor, bridges: s.associationBridges, bridgeMinCosine: s.bridgeMinCosine } : false,
    currency: s.currency ? { ratio: s.currencyRatio } : false,
    // The engine's own session (one per open); the replay names one per pass.
    session: undefined,
    understand: s.understand,
    synthesis: s.synthesis === 'off' ? false : s.synthesis,
    originalQueryWeight: s.originalQueryWeight,
    listFusion: s.listFusion,
    hyde: s.hyde,
    feedback: s.feedback ? { docs: s.feedbackDocs, terms: s.feedbackTerms, originalWeight: s.feedbackOriginalWeight } : false,
    rerank:
      s.rerankBy === 'off'
        ? false
        : s.rerankBy === 'rules'
          ? { by: s.rerankBy, inputLimit: s.rerankInputLimit, weights: { coverage: s.rerankCoverage, proximity: s.rerankProximity } }
          : { by: s.rerankBy, inputLimit: s.rerankInputLimit },
    llmTimeoutMs: s.llmTimeoutMs,
    assembly: s.assembly,
    qualityWeight: s.qualityWeight,
  };
}

interface Spec {
  key: Key;
  label: string;
  help: string;
  type: 'range' | 'select' | 'checkbox' | 'date' | 'text' | 'number';
  min?: number;
  max?: number;
  step?: number;
  /** Fixed choices, or 'projects' for the projects found in the store. */
  options?: [value: string, label: string][] | 'projects';
  when?: (s: ControlState) => boolean;
}

const decaying = (s: ControlState) => s.decayKind !== 'off';
/** The caller's list weight matters only when there is another list to weigh it against. */
const expanding = (s: ControlState) => s.synthesis !== 'off' || s.hyde;
const LLM_NOTE = 'Needs a language model (picked above); without one the stage is skipped and the trace says why.';

const GROUPS: { title: string; specs: Spec[] }[] = [
  {
    title: 'Retrieval',
    specs: [
      { key: 'mode', label: 'Mode', type: 'select', help: 'auto = hybrid when the model is ready, lexical otherwise.', options: [['auto', 'auto'], ['hybrid', 'hybrid (BM25 + vectors)'], ['lexical', 'lexical (BM25 only)'], ['vector', 'vector (cosine only)']] },
      { key: 'k', label: 'Hits (k)', type: 'range', min: 1, max: 30, step: 1, help: 'How many hits come back.' },
      { key: 'candidatePool', label: 'Candidate pool', type: 'range', min: 5, max: 300, step: 5, help: 'Candidates each leg hands to fusion.' },
    ],
  },
  {
    title: 'Query understanding & expansion',
    specs: [
      { key: 'understand', label: 'Understand', type: 'select', help: `Classify the query (identifier, preference, temporal, aggregation, factual). rules = cue words; llm = ask the model, rules as fallback. ${LLM_NOTE}`, options: [['rules', 'rules'], ['llm', 'language model']] },
      { key: 'synthesis', label: 'Synthesis', type: 'select', help: `More queries for the same question, each searched by both legs, then fused with yours (list fusion). llm: 2–5 by query type. offline: from the store and the built-in model, no LLM.`, options: [['off', 'off'], ['offline', 'offline (no LLM)'], ['llm', 'language model']] },
      { key: 'hyde', label: 'HyDE', type: 'checkbox', help: `The model writes a hypothetical answer; it is embedded and searched as one more vector list. ${LLM_NOTE}` },
      { key: 'feedback', label: 'Feedback', type: 'checkbox', help: 'Pseudo-relevance feedback: the best lexical hits vote for their words, and the lexical leg searches again with them. On by default for long documents (mean 64+ terms), off for notes and chat.' },
      { key: 'feedbackDocs', label: 'Feedback hits', type: 'range', min: 1, max: 50, step: 1, help: 'Lexical hits that vote.', when: (s) => s.feedback },
      { key: 'feedbackTerms', label: 'Feedback words', type: 'range', min: 1, max: 60, step: 1, help: 'Voted words added to the query.', when: (s) => s.feedback },
      { key: 'feedbackOriginalWeight', label: 'Your words’ share', type: 'range', min: 0.05, max: 1, step: 0.05, help: 'Share of the weighted query your own words keep.', when: (s) => s.feedback },
      { key: 'originalQueryWeight', label: 'Your query’s list weight', type: 'range', min: 0, max: 5, step: 0.5, help: 'Weight of your query’s list in the list fusion; each synthesized or HyDE list weighs 1.', when: expanding },
      { key: 'listFusion', label: 'List fusion', type: 'select', help: 'How the query lists become one: scores = weighted mean of each list’s fused score; rrf = weighted Σ w / (rrfK + rank) (CEMS).', options: [['scores', 'scores (weighted mean)'], ['rrf', 'RRF (ranks)']], when: expanding },
      { key: 'llmTimeoutMs', label: 'Model timeout (ms)', type: 'range', min: 1000, max: 60_000, step: 1000, help: 'A model call (or the rerank hook) slower than this is skipped; the search answers without it.' },
    ],
  },
  {
    title: 'Fusion',
    specs: [
      {
        key: 'fusion',
        label: 'Method',
        type: 'select',
        help: 'convex = Σ w/Σw · min-max normalised leg score; scaled = the same on absolute scales (a match never scores 0); rrf = Σ w / (rrfK + rank); blend = ½ RRF/max + ½ cosine.',
        options: [['convex', 'convex (scores)'], ['scaled', 'scaled (absolute scores)'], ['rrf', 'RRF (ranks)'], ['blend', 'blend (RRF + cosine)']],
      },
      { key: 'rrfK', label: 'rrfK', type: 'range', min: 1, max: 200, step: 1, help: 'Small rrfK favours top ranks. Also used by list fusion rrf.', when: (s) => s.fusion === 'rrf' || s.fusion === 'blend' || (expanding(s) && s.listFusion === 'rrf') },
      { key: 'weightLexical', label: 'Lexical weight', type: 'range', min: 0, max: 3, step: 0.05, help: 'w of the BM25 leg.' },
      { key: 'weightVector', label: 'Vector weight', type: 'range', min: 0, max: 3, step: 0.05, help: 'w of the cosine leg.' },
      { key: 'topRankBonus', label: 'Top-rank bonus', type: 'checkbox', help: '+0.05 for a leg’s rank 1, +0.02 for ranks 2–3.' },
      { key: 'neighbours', label: 'Thread neighbours', type: 'checkbox', help: 'Strong hits lend score to turns near them in the same thread (meta.thread).' },
      { key: 'neighbourWindow', label: 'Neighbour window', type: 'range', min: 0, max: 10, step: 1, help: 'Turns before and after that receive support.', when: (s) => s.neighbours },
      { key: 'neighbourWeight', label: 'Neighbour weight', type: 'range', min: 0, max: 2, step: 0.05, help: 'Lent: weight × lender score / distance.', when: (s) => s.neighbours },
      { key: 'neighbourLenders', label: 'Lenders', type: 'range', min: 0, max: 100, step: 1, help: 'How many of the best candidates lend.', when: (s) => s.neighbours },
      { key: 'neighbourTime', label: 'Neighbours in time', type: 'checkbox', help: 'Memories without a thread lend to and borrow from the ones written just before and after them.', when: (s) => s.neighbours },
      { key: 'neighbourTimeGapMin', label: 'Time gap (minutes)', type: 'range', min: 0, max: 1440, step: 5, help: 'Neighbours in time stop at a pause longer than this between two memories (one sitting).', when: (s) => s.neighbours && s.neighbourTime },
    ],
  },
  {
    title: 'Time decay',
    specs: [
      { key: 'decayKind', label: 'Decay', type: 'select', help: 'recency = 1 / (1 + days / half-life), exp(−age / τ), or stability: exp(−days since last retrieval / (S · B · β)), S = the memory’s stability (use raises it), B = 1 + 2 × importance; score × recency^α.', options: [['hyperbolic', 'hyperbolic'], ['exponential', 'exponential'], ['stability', 'stability (learns from use)'], ['off', 'off']] },
      { key: 'halfLifeDays', label: 'Half-life (days)', type: 'range', min: 1, max: 720, step: 1, help: 'Age at which recency is 0.5 before α.', when: (s) => s.decayKind === 'hyperbolic' },
      { key: 'tauDays', label: 'τ (days)', type: 'range', min: 0.5, max: 365, step: 0.5, help: 'Age at which recency is 1/e before α.', when: (s) => s.decayKind === 'exponential' },
      { key: 'betaDays', label: 'β (days)', type: 'range', min: 1, max: 720, step: 1, help: 'Days a memory of stability 1 and no extra importance keeps before recency falls to 1/e.', when: (s) => s.decayKind === 'stability' },
      { key: 'stabilityFloor', label: 'Floor', type: 'range', min: 0, max: 1, step: 0.01, help: 'Recency never falls below this. A memory that sits at the floor for 7 days is cold.', when: (s) => s.decayKind === 'stability' },
      { key: 'coreFloor', label: 'Core floor', type: 'range', min: 0, max: 1, step: 0.05, help: 'Recency of a core memory never falls below this.', when: (s) => s.decayKind === 'stability' },
      { key: 'decayAlpha', label: 'α (damping)', type: 'range', min: 0, max: 2, step: 0.05, help: '1 = raw curve; smaller keeps old facts reachable.', when: decaying },
      { key: 'decayFrom', label: 'Decay from', type: 'select', help: 'Age counts from creation or from the last access.', options: [['created', 'created'], ['accessed', 'last accessed']], when: (s) => decaying(s) && s.decayKind !== 'stability' },
      { key: 'decayScope', label: 'Decay applies to', type: 'select', help: 'Every memory, or only those in a thread or a sitting (one-off notes and imported files keep their score).', options: [['all', 'every memory'], ['sequences', 'threads and sittings']], when: (s) => decaying(s) && s.decayKind !== 'stability' },
      { key: 'now', label: '“Now”', type: 'date', help: 'Replay the ranking as of another day.' },
    ],
  },
  {
    title: 'Boosts',
    specs: [
      { key: 'project', label: 'Current project', type: 'select', options: 'projects', help: 'Boosts its memories, damps the others.' },
      { key: 'projectSame', label: 'Same project ×', type: 'range', min: 0, max: 3, step: 0.05, help: 'Memory in the current project.', when: (s) => s.project !== '' },
      { key: 'projectOther', label: 'Other project ×', type: 'range', min: 0, max: 3, step: 0.05, help: 'Memory in another project.', when: (s) => s.project !== '' },
      { key: 'projectNone', label: 'No project ×', type: 'range', min: 0, max: 3, step: 0.05, help: 'Memory without a project.', when: (s) => s.project !== '' },
      { key: 'pinnedBoost', label: 'Pinned ×', type: 'range', min: 1, max: 3, step: 0.05, help: 'Multiplier for pinned memories; priority (1–2) multiplies too.' },
      { key: 'dateBoost', label: 'Date ×', type: 'range', min: 1, max: 10, step: 0.5, help: 'Multiplier for memories written on a date the query names ("in June", "on 13 October 2023"); 1 turns it off.' },
      { key: 'qualityWeight', label: 'Quality weight', type: 'range', min: 0, max: 1, step: 0.05, help: 'Added to the fused score: weight × the memory’s quality (0–1), for memories that have one.' },
    ],
  },
  {
    title: 'Filters',
    specs: [
      { key: 'filterProject', label: 'Only project', type: 'select', options: 'projects', help: 'Hard filter: other memories never compete.' },
      { key: 'filterKinds', label: 'Only kinds', type: 'text', help: 'Comma-separated, e.g. bug, decision.' },
      { key: 'filterTags', label: 'Must have tags', type: 'text', help: 'Comma-separated; all must match.' },
      { key: 'since', label: 'Since', type: 'date', help: 'Created on or after.' },
      { key: 'until', label: 'Until', type: 'date', help: 'Created on or before.' },
      { key: 'deepRecall', label: 'Deep recall', type: 'checkbox', help: 'Include superseded memories, at a penalty.' },
      { key: 'deepRecallPenalty', label: 'Superseded ×', type: 'range', min: 0, max: 1, step: 0.05, help: 'Score multiplier for superseded and expired memories.', when: (s) => s.deepRecall || s.includeExpiredTransients },
      { key: 'includeExpiredTransients', label: 'Expired plans', type: 'checkbox', help: 'Include memories of kind plan or transient_state past their validUntil, at the same penalty.' },
      { key: 'includeExpiredInDeepRecall', label: 'Every expired memory', type: 'checkbox', help: 'With deep recall, include every memory past its validUntil, at the same penalty.', when: (s) => s.deepRecall },
      { key: 'filterCore', label: 'Core memories', type: 'select', help: 'filter.core: only core memories (well used: promoted by retrieval), or none of them.', options: [['any', 'any'], ['core', 'only core'], ['other', 'no core']] },
      { key: 'minScore', label: 'Minimum score', type: 'number', min: 0, max: 1, step: 0.0005, help: 'Drop hits scoring below this.' },
    ],
  },
  {
    title: 'Re-ranking',
    specs: [
      { key: 'rerankBy', label: 'Re-rank by', type: 'select', help: 'Re-orders the best candidates after boosts, before diversity. rules: deterministic; llm: the model; hook: the demo’s own reranker (query words first).', options: [['off', 'off'], ['rules', 'rules (deterministic)'], ['llm', 'language model'], ['hook', 'hook (the page’s reranker)']] },
      { key: 'rerankInputLimit', label: 'Input limit', type: 'range', min: 2, max: 200, step: 1, help: 'How many of the best candidates the re-ranker sees.', when: (s) => s.rerankBy !== 'off' },
      { key: 'rerankCoverage', label: 'Coverage weight', type: 'range', min: 0, max: 2, step: 0.05, help: 'rules: score × (1 + coverage × c + proximity × p); c = idf-weighted share of the query’s terms the memory has.', when: (s) => s.rerankBy === 'rules' },
      { key: 'rerankProximity', label: 'Proximity weight', type: 'range', min: 0, max: 2, step: 0.05, help: 'p = share of the query’s consecutive word pairs found in the memory in order, close together.', when: (s) => s.rerankBy === 'rules' },
    ],
  },
  {
    title: 'Learning from use',
    specs: [
      { key: 'touch', label: 'Touch hits', type: 'checkbox', help: 'Record an access on each hit (library default: on; off here so tuning does not change the data).' },
      { key: 'reinforce', label: 'Reinforce', type: 'checkbox', help: 'With touch: hits gain stability, record the session, may become core, and every two direct hits strengthen their association (+0.1). Replay questions always reinforces.', when: (s) => s.touch },
      { key: 'associations', label: 'Follow associations', type: 'checkbox', help: 'Stage associate: each of the best k brings in the memories it was retrieved with before, scored fused of that hit × calibrated cosine to the query × weight, then recency and boosts (library default: off).' },
      { key: 'associationFloor', label: 'Activation floor', type: 'range', min: 0, max: 1, step: 0.05, help: 'Associations weaker than this (after a 90-day decay) are not followed. Each search that returns two memories together adds 0.1.', when: (s) => s.associations },
      { key: 'associationBridges', label: 'Bridges', type: 'checkbox', help: 'A second hop: memories associated with an associated memory (weight w₁ · w₂), joining separate clusters.', when: (s) => s.associations },
      { key: 'bridgeMinCosine', label: 'Bridge min cosine', type: 'range', min: -1, max: 1, step: 0.05, help: 'A bridge memory must be at least this similar to the query.', when: (s) => s.associations && s.associationBridges },
    ],
  },
  {
    title: 'Diversity (MMR)',
    specs: [
      { key: 'diversity', label: 'Diversify', type: 'checkbox', help: 'Pick by λ·score − (1−λ)·max cosine to picked hits.' },
      { key: 'lambda', label: 'λ', type: 'range', min: 0, max: 1, step: 0.01, help: '1 = pure relevance, 0 = pure novelty.', when: (s) => s.diversity },
      { key: 'duplicateThreshold', label: 'Duplicate threshold', type: 'range', min: 0.5, max: 1, step: 0.005, help: 'Similarity at which a hit also counts as a duplicate and is dropped (1: only hits that say the same thing).', when: (s) => s.diversity },
      { key: 'tagWeight', label: 'Tag weight', type: 'range', min: 0, max: 1, step: 0.05, help: 'Similarity of two memories = max(cosine, weight × Jaccard of their tags): shared tags count as related.', when: (s) => s.diversity },
      { key: 'currency', label: 'Newer version first', type: 'checkbox', help: 'Stage currency: of two hits that are versions of one fact, the later is placed just above the earlier, which names it (explain.newerVersion). Library default: on.' },
      { key: 'currencyRatio', label: 'Currency ratio', type: 'range', min: 0, max: 1, step: 0.05, help: 'The later version moves up when it scores at least this share of the earlier one.', when: (s) => s.currency },
      { key: 'raw', label: 'Raw', type: 'checkbox', help: 'Skip min score, dedup, currency and diversity (debugging).' },
    ],
  },
  {
    title: 'Assembly',
    specs: [
      { key: 'assembly', label: 'Assembly', type: 'select', help: 'Which hits fill the k places, and the order the context is filled in. diverse: first the best of each thread (meta.thread), then the rest; auto: diverse for aggregation questions; cover: greedy, then every thread keyword search reaches in its first k is reached; hedge (default): cover for the first 2, or for the first k when the question asks for many memories or no thread stands out.', options: [['hedge', 'hedge (cover when unsure)'], ['greedy', 'greedy (best by MMR)'], ['diverse', 'diverse (one per thread first)'], ['auto', 'auto (by query type)'], ['cover', 'cover (threads keyword search reaches)']] },
    ],
  },
  {
    title: 'Context',
    specs: [
      { key: 'tokenBudget', label: 'Token budget', type: 'range', min: 50, max: 4000, step: 50, help: 'Greedy: whole memories that fit, best first.' },
    ],
  },
];

function formatValue(spec: Spec, value: ControlState[Key]): string {
  if (typeof value !== 'number') return String(value);
  const step = spec.step ?? 1;
  const decimals = step >= 1 ? 0 : Math.min(4, Math.ceil(-Math.log10(step)));
  return value.toFixed(decimals);
}

export interface Controls {
  state(): ControlState;
  set(state: ControlState): void;
  setProjects(projects: string[]): void;
}

/** Renders the controls into `root`; `onChange` fires on every input (the caller debounces). */
export function mountControls(root: HTMLElement, initial: ControlState, onChange: (state: ControlState) => void): Controls {
  let state = { ...initial };
  const defaults = defaultState();
  let projects: string[] = [];
  const inputs = new Map<Key, { spec: Spec; input: HTMLInputElement | HTMLSelectElement; wrap: HTMLElement; output?: HTMLOutputElement }>();
  const legends: { legend: HTMLElement; keys: Key[]; badge: HTMLElement }[] = [];

  const read = (spec: Spec, input: HTMLInputElement | HTMLSelectElement): ControlState[Key] => {
    if (spec.type === 'checkbox') return (input as HTMLInputElement).checked;
    if (spec.type === 'range' || spec.type === 'number') {
      const n = Number(input.value);
      return Number.isFinite(n) ? n : (defaults[spec.key] as number);
    }
    return input.value;
  };

  const projectOptions = (spec: Spec) =>
    [['', spec.key === 'project' ? '(none)' : '(any)'], ...projects.map((p) => [p, p])].map(([value, label]) => h('option', { value }, label));

  for (const group of GROUPS) {
    const badge = h('span', { class: 'changed-count', 'aria-label': 'settings changed from default' });
    const legend = h('legend', {}, group.title, ' ', badge);
    const fieldset = h('fieldset', { class: 'group' }, legend);
    for (const spec of group.specs) {
      const id = `opt-${spec.key}`;
      const helpId = `${id}-help`;
      let input: HTMLInputElement | HTMLSelectElement;
      if (spec.type === 'select') {
        input = h('select', { id, 'aria-describedby': helpId });
        if (spec.options !== 'projects') input.append(...(spec.options ?? []).map(([value, label]) => h('option', { value }, label)));
      } else {
        input = h('input', {
          id,
          type: spec.type,
          'aria-describedby': helpId,
          min: spec.min,
          max: spec.max,
          step: spec.step,
          ...(spec.type === 'text' ? { placeholder: 'any', autocomplete: 'off' } : {}),
        });
      }
      const output = spec.type === 'range' ? h('output', { for: id }) : undefined;
      const label = h('label', { for: id }, spec.label);
      const help = h('small', { id: helpId, class: 'help' }, spec.help);
      const wrap =
        spec.type === 'checkbox'
          ? h('div', { class: 'control checkbox' }, input, label, help)
          : h('div', { class: 'control' }, h('div', { class: 'control-head' }, label, output), input, help);
      wrap.dataset.key = spec.key;
      input.addEventListener('input', () => {
        state = { ...state, [spec.key]: read(spec, input) };
        refresh();
        onChange(state);
      });
      inputs.set(spec.key, { spec, input, wrap, output });
      fieldset.append(wrap);
    }
    legends.push({ legend, keys: group.specs.map((s) => s.key), badge });
    root.append(fieldset);
  }

  function refresh(): void {
    for (const [key, { spec, input, wrap, output }] of inputs) {
      const value = state[key];
      if (spec.type === 'checkbox') (input as HTMLInputElement).checked = value as boolean;
      else if (document.activeElement !== input || spec.type === 'range' || spec.type === 'select') input.value = String(value);
      if (output) output.textContent = formatValue(spec, value);
      wrap.hidden = spec.when ? !spec.when(state) : false;
      wrap.classList.toggle('changed', value !== defaults[key]);
    }
    for (const { keys, badge } of legends) {
      const changed = keys.filter((k) => state[k] !== defaults[k]).length;
      badge.textContent = changed ? `${changed} changed` : '';
    }
  }

  refresh();
  return {
    state: () => state,
    set(next) {
      state = { ...next };
      refresh();
    },
    setProjects(next) {
      projects = next;
      for (const { spec, input } of inputs.values()) {
        if (spec.options !== 'projects') continue;
        input.replaceChildren(...projectOptions(spec));
        // A saved choice may name a project the store no longer has; keep it visible rather than silently drop it.
        const value = String(state[spec.key]);
        if (value && !projects.includes(value)) input.append(h('option', { value }, value));
      }
      refresh();
    },
  };
}
