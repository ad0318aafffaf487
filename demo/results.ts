/** Hits as cards: highlighted text, every explain figure, a bar of how the score is made, and rank changes. */
import { LexicalIndex, topRankBonus } from '../src/internals.js';
import type { Hit, MemoryRecord, SearchOptions, SearchResult, TraceQuery } from '../src/index.js';
import { associationView, type AssociationContext, type AssociationSource } from './associations.js';
import { formatAge, formatDate, h } from './dom.js';

/** What the previous search returned, to show how a change moved each hit. */
export interface Ranking {
  query: string;
  hits: { id: string; text: string }[];
}

export interface HitActions {
  pin(memory: MemoryRecord): void;
  edit(memory: MemoryRecord): void;
  remove(memory: MemoryRecord): void;
}

export interface RenderContext {
  query: string;
  /** The search's query lists (`trace.queries`): `explain.lists.ranks` has one rank per list, in this order. */
  queries: readonly TraceQuery[];
  options: Pick<SearchOptions, 'fusion' | 'rrfK' | 'weights' | 'topRankBonus'>;
  /** The search recorded an access on each hit (`touch`): `memory.accessCount` includes it. */
  touched: boolean;
  now: number;
  previous: Ranking | null;
  /** LoCoMo evidence ids for the current question, if any. */
  evidence: ReadonlySet<string>;
  actions: HitActions;
  /** Each hit's association view reads from here. */
  associations: { source: AssociationSource; floor: number; open: Set<string> };
}

// A default lexical index processes terms exactly as the engine's default one does (stop words, term
// processor), so the highlighted words are the ones BM25 actually matched.
const terms = new LexicalIndex();
const TOKEN_SPLIT = /([\n\r\p{Z}\p{P}]+)/u;

export function highlight(text: string, query: string): (string | HTMLElement)[] {
  const wanted = new Set(terms.queryTerms(query));
  if (wanted.size === 0) return [text];
  return text.split(TOKEN_SPLIT).map((token) => (terms.queryTerms(token).some((t) => wanted.has(t)) ? h('mark', {}, token) : token));
}

const fixed = (n: number, digits: number) => n.toFixed(digits);

interface FusedParts {
  lexical: number;
  vector: number;
  /** Both legs' part when the split is not known: convex fusion normalises by each leg's min and max, which a hit does not carry. */
  both: number;
  neighbour: number;
  /** `qualityWeight × quality`, added to the fused score before recency and boost. */
  quality: number;
  /** An associative hit's fused score, made by the associate stage rather than the legs. */
  associative: number;
}

/** How the fused score (`explain.fused`) is made, from the parts a hit's explain allows to recover. */
function fusedParts(hit: Hit, o: RenderContext['options']): FusedParts {
  const e = hit.explain;
  const neighbour = e.neighbour?.bonus ?? 0;
  const quality = e.quality?.added ?? 0;
  const base = Math.max(0, e.fused - neighbour);
  if (e.associative) return { lexical: 0, vector: 0, both: 0, neighbour, quality, associative: base };
  // Several query lists (synthesis, HyDE) are fused per list, then across lists: the legs' split is not recoverable.
  if (e.lists) return { lexical: 0, vector: 0, both: base, neighbour, quality, associative: 0 };
  if (o.fusion === 'rrf') {
    const part = (rank: number | null, weight: number) =>
      rank === null ? 0 : weight / (o.rrfK + rank) + (o.topRankBonus && weight > 0 ? topRankBonus(rank) : 0);
    return { lexical: part(e.bm25Rank, o.weights.lexical), vector: part(e.vecRank, o.weights.vector), both: 0, neighbour, quality, associative: 0 };
  }
  if (e.vecRank === null) return { lexical: base, vector: 0, both: 0, neighbour, quality, associative: 0 };
  if (e.bm25Rank === null) return { lexical: 0, vector: base, both: 0, neighbour, quality, associative: 0 };
  return { lexical: 0, vector: 0, both: base, neighbour, quality, associative: 0 };
}

function scoreBar(hit: Hit, scale: number, o: RenderContext['options']): HTMLElement {
  const parts = fusedParts(hit, o);
  const total = parts.lexical + parts.vector + parts.both + parts.neighbour + parts.quality + parts.associative || 1;
  const pct = (x: number) => `${Math.max(0, Math.min(100, (x / scale) * 100)).toFixed(2)}%`;
  const share = (x: number) => `${Math.round((x / total) * 100)}%`;
  const { fused, recency, boost } = hit.explain;
  const made = [
    parts.lexical && `lexical ${share(parts.lexical)}`,
    parts.vector && `vector ${share(parts.vector)}`,
    parts.both && `both legs ${share(parts.both)}`,
    parts.neighbour && `neighbour ${share(parts.neighbour)}`,
    parts.quality && `quality ${share(parts.quality)}`,
    parts.associative && `association ${share(parts.associative)}`,
  ].filter(Boolean);
  const relevance = parts.quality ? `(fused ${fixed(fused, 4)} + quality ${fixed(parts.quality, 4)})` : `fused ${fixed(fused, 4)}`;
  const label =
    `score ${fixed(hit.score, 4)} = ${relevance} (${made.join(', ')}) × recency ${fixed(recency, 3)} × boost ${fixed(boost, 3)}` +
    (hit.explain.superseded ? ' × superseded penalty' : '');
  const segment = (cls: string, x: number) => x > 0 && h('span', { class: cls, style: { 'flex-grow': String(x / total) } });
  return h(
    'div',
    { class: 'scorebar', role: 'img', 'aria-label': label, title: label },
    h('div', { class: 'bar-fused', style: { width: pct(fused) } }),
    h(
      'div',
      { class: 'bar-score', style: { width: pct(hit.score) } },
      segment('seg-lex', parts.lexical),
      segment('seg-vec', parts.vector),
      segment('seg-both', parts.both),
      segment('seg-nb', parts.neighbour),
      segment('seg-q', parts.quality),
      segment('seg-assoc', parts.associative),
    ),
  );
}

function delta(id: string, rank: number, previous: Map<string, number> | null): HTMLElement | null {
  if (!previous) return null;
  const before = previous.get(id);
  if (before === undefined) return h('span', { class: 'delta new', title: 'not in the previous results' }, 'new');
  if (before === rank) return h('span', { class: 'delta same', title: 'same rank as before' }, '=');
  const up = before > rank;
  return h(
    'span',
    { class: `delta ${up ? 'up' : 'down'}`, title: `was #${before}` },
    `${up ? '↑' : '↓'}${Math.abs(before - rank)}`,
  );
}

function figure(name: string, value: string, title: string): HTMLElement {
  return h('div', { class: 'fig', title }, h('dt', {}, name), h('dd', {}, value));
}

function rankText(rank: number | null, score: number | null, digits: number): string {
  return rank === null ? '—' : `#${rank}${score === null ? '' : ` (${fixed(score, digits)})`}`;
}

/** `#1 · — · #4`: the hit's rank in each query list; the title names the lists. */
function listRanks(lists: NonNullable<Hit['explain']['lists']>, queries: readonly TraceQuery[]): HTMLElement {
  const shown = lists.ranks.map((rank) => (rank === null ? '—' : `#${rank}`)).join(' · ');
  const named = lists.ranks.map((rank, i) => {
    const q = queries[i];
    return `q${i + 1} ${q ? `${q.source} ×${q.weight}` : ''}: ${rank === null ? 'absent' : `#${rank}`}`;
  });
  const rrf = lists.rrf === undefined ? '' : `. Weighted RRF Σ w/(rrfK + rank) = ${fixed(lists.rrf, 4)}`;
  return figure('lists', shown, `rank in each query list (trace → query lists): ${named.join('; ')}${rrf}`);
}

const FUSED_TITLE: Record<SearchOptions['fusion'], string> = {
  convex: 'Σ w/Σw · min-max normalised leg score',
  scaled: 'Σ w/Σw · leg score on an absolute scale',
  rrf: 'RRF over the legs',
  blend: '½ · RRF / max RRF + ½ · cosine',
};

function explainList(hit: Hit, fusion: SearchOptions['fusion'], queries: readonly TraceQuery[]): HTMLElement {
  const e = hit.explain;
  return h(
    'dl',
    { class: 'explain' },
    figure('score', fixed(hit.score, 4), 'what the hits are ordered by: (fused + quality) × recency × boost'),
    figure('bm25', rankText(e.bm25Rank, e.bm25, 2), 'rank (and BM25 score) in the lexical leg; — when that leg did not return it'),
    figure('vec', rankText(e.vecRank, null, 0), 'rank in the vector leg; — when that leg did not return it'),
    figure('cos', e.cosine === null ? '—' : fixed(e.cosine, 3), 'cosine similarity to the query'),
    e.associative && figure('assoc', `w ${fixed(e.associative.weight, 3)}`, 'came in through an association: fused = fused of the hit it came through × calibrated cosine × association weight (open Associations for the path)'),
    figure(
      'fused',
      fixed(e.fused, 4),
      `${FUSED_TITLE[fusion]}, plus any neighbour support (explain.fused)`,
    ),
    e.rrf !== undefined && figure('rrf', fixed(e.rrf, 4), 'Σ w / (rrfK + rank) over the legs (explain.rrf)'),
    figure('recency', `×${fixed(e.recency, 3)}`, 'time decay factor, recency^α'),
    figure('boost', `×${fixed(e.boost, 3)}`, e.dated ? 'priority × pinned × project × date: written on a date the query names' : 'priority × pinned × project'),
    e.lists && listRanks(e.lists, queries),
    e.quality && figure('quality', `${fixed(e.quality.value, 2)} (+${fixed(e.quality.added, 4)})`, 'the memory’s quality (0–1) and what it added to the fused score: qualityWeight × quality'),
    e.rerank &&
      figure(
        'rerank',
        e.rerank.from === e.rerank.to ? `#${e.rerank.to} = (${e.rerank.by})` : `#${e.rerank.from} → #${e.rerank.to} (${e.rerank.by})`,
        `place among the re-ranked candidates before and after the ${e.rerank.by} re-ranker`,
      ),
    hit.memory.stability !== undefined &&
      figure(
        'stability',
        fixed(hit.memory.stability, 2),
        `how slowly this memory fades (0–1), raised by each retrieval; ${hit.memory.accessCount} accesses in ${hit.memory.sessions?.length ?? 0} sessions`,
      ),
    e.mmr !== undefined && figure('mmr', fixed(e.mmr, 4), 'MMR value when picked: λ·score − (1−λ)·max similarity (cosine, or tag weight × tag Jaccard) to hits picked before'),
    e.covers !== undefined && figure('covers', `thread ${e.covers.thread}`, `placed by assembly 'hedge' or 'cover': keyword search reached this thread at lexical rank #${e.covers.lexicalRank}`),
  );
}

function actionButtons(m: MemoryRecord, actions: HitActions): HTMLElement {
  const button = (cls: string, label: string, run: () => void, extra: Record<string, string> = {}) =>
    h('button', { type: 'button', class: cls, 'aria-label': `${label}: ${m.text.slice(0, 60)}`, ...extra, on: { click: run } }, label);
  return h(
    'div',
    { class: 'hit-actions' },
    button('pin', m.pinned ? 'Unpin' : 'Pin', () => actions.pin(m), { 'aria-pressed': String(m.pinned) }),
    button('edit', 'Edit', () => actions.edit(m)),
    button('delete', 'Delete', () => actions.remove(m)),
  );
}

function associativeBadge(hit: Hit, hits: AssociationContext['hits']): HTMLElement | null {
  const path = hit.explain.associative;
  if (!path) return null;
  const via = hits.get(path.via);
  const through = via ? `#${via.rank}` : 'a candidate';
  const label = path.bridge !== undefined ? `bridge via ${through} · w ${fixed(path.weight, 2)}` : `associative via ${through} · w ${fixed(path.weight, 2)}`;
  return h('span', { class: `badge associative${path.bridge !== undefined ? ' bridge' : ''}`, title: 'reached through the associations of a direct hit, not from the search legs (open Associations)' }, label);
}

function hitCard(hit: Hit, rank: number, scale: number, ctx: RenderContext, previous: Map<string, number> | null, hits: AssociationContext['hits']): HTMLElement {
  const m = hit.memory;
  const e = hit.explain;
  const created = new Date(m.createdAt);
  return h(
    'li',
    { class: 'hit', dataset: { id: hit.id } },
    h('div', { class: 'hit-rank' }, h('span', { class: 'rank-number' }, `#${rank}`), delta(hit.id, rank, previous)),
    h(
      'div',
      { class: 'hit-body' },
      h('p', { class: 'hit-text' }, ...highlight(hit.text, ctx.query)),
      h(
        'div',
        { class: 'hit-meta' },
        h('time', { datetime: created.toISOString(), title: created.toLocaleString() }, `${formatDate(m.createdAt)} · ${formatAge(m.createdAt, ctx.now)}`),
        m.kind && h('span', { class: 'tag kind' }, m.kind),
        m.project && h('span', { class: 'tag project' }, m.project),
        ...m.tags.map((t) => h('span', { class: 'tag' }, `#${t}`)),
        m.pinned && h('span', { class: 'badge pinned' }, '★ pinned'),
        m.priority !== 1 && h('span', { class: 'badge' }, `priority ×${m.priority}`),
        e.superseded && h('span', { class: 'badge superseded', title: `superseded by ${m.supersededBy ?? 'a newer memory'}` }, 'superseded'),
        e.neighbour && h('span', { class: 'badge neighbour', title: `support lent by ${e.neighbour.from}, a strong hit near it in the same thread` }, `neighbour +${fixed(e.neighbour.bonus, 4)}`),
        ctx.evidence.has(hit.id) && h('span', { class: 'badge evidence', title: 'LoCoMo evidence for this question' }, '✓ evidence'),
        m.core && h('span', { class: 'badge core', title: 'a core memory: used often, stable, in several sessions (recency never falls below the core floor)' }, '◆ core'),
        associativeBadge(hit, hits),
        // Only when this search recorded the access (so it is hot again) and the memory had been retrieved before: a
        // memory never retrieved since its (old) date, as every sample memory is, is only old, and its age is shown.
        ctx.touched && e.cold && m.accessCount > 1 && h('span', { class: 'badge cold', title: 'this memory had been retrieved before, then went cold (recency at its floor for 7 days or more); being retrieved made it hot again' }, 'was cold'),
      ),
      scoreBar(hit, scale, ctx.options),
      h('div', { class: 'hit-foot' }, explainList(hit, ctx.options.fusion, ctx.queries), actionButtons(m, ctx.actions)),
      associationView(hit, { ...ctx.associations, hits, now: ctx.now }),
    ),
  );
}

export interface Changes {
  moved: number;
  added: number;
  dropped: Ranking['hits'];
}

/** Renders the hits into `list` and the hits that fell out into `droppedList`; returns what changed. */
export function renderHits(list: HTMLElement, droppedList: HTMLElement, result: SearchResult, ctx: RenderContext): Changes {
  const comparable = ctx.previous && ctx.previous.query === ctx.query ? ctx.previous : null;
  const previous = comparable ? new Map(comparable.hits.map((hit, i) => [hit.id, i + 1])) : null;
  const scale = Math.max(1e-12, ...result.hits.map((hit) => Math.max(hit.score, hit.explain.fused)));
  const hits = new Map(result.hits.map((hit, i) => [hit.id, { rank: i + 1, text: hit.text, fused: hit.explain.fused }]));
  list.replaceChildren(...result.hits.map((hit, i) => hitCard(hit, i + 1, scale, ctx, previous, hits)));
  const current = new Set(result.hits.map((hit) => hit.id));
  const dropped = comparable ? comparable.hits.filter((hit) => !current.has(hit.id)) : [];
  droppedList.replaceChildren(
    ...dropped.map((hit) =>
      h('li', {}, h('span', { class: 'delta dropped' }, `dropped (was #${previous?.get(hit.id)})`), ' ', hit.text.length > 120 ? `${hit.text.slice(0, 117)}…` : hit.text),
    ),
  );
  droppedList.hidden = dropped.length === 0;
  return {
    moved: previous ? result.hits.filter((hit, i) => previous.has(hit.id) && previous.get(hit.id) !== i + 1).length : 0,
    added: previous ? result.hits.filter((hit) => !previous.has(hit.id)).length : 0,
    dropped,
  };
}
