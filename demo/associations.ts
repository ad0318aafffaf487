/**
 * A hit's association view: the memories it has been retrieved with (`memory.related`), strongest first, each with
 * its weight after decay, and, for a hit that came in through an association, why it did: through which direct hit
 * (and bridge), the weight, its cosine to the query and the score those make. Memory text goes in as text nodes only.
 *
 * The associate stage (src/search/associate.ts) scores such a hit
 *   fused = fused(the hit it came through) × calibrated cosine(query, memory) × weight,
 * the cosine calibrated to the query's mean cosine to the store; `explain` carries the raw cosine, so the view
 * shows the calibrated one as what the other factors leave of `fused` when the hit it came through is on the page.
 */
import type { Association, Hit, MemoryRecord } from '../src/index.js';
import { formatAge, h } from './dom.js';

/** What the view reads of the open memory. */
export interface AssociationSource {
  related(id: string): Promise<Association[]>;
  get(id: string): Promise<MemoryRecord | null>;
}

export interface AssociationContext {
  source: AssociationSource;
  /** The hits of the same search, by id, with their rank: `via` is usually one of them. */
  hits: ReadonlyMap<string, { rank: number; text: string; fused: number }>;
  /** Weight from which the associate stage follows an edge (the control's floor). */
  floor: number;
  now: number;
  /** Ids whose view is open: a re-render (every search) opens them again. */
  open: Set<string>;
}

const fixed = (n: number, digits: number) => n.toFixed(digits);
const clip = (text: string, max = 160) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A memory named by id: its rank among the hits when it is one, and its text (read when it is not a hit). */
async function described(id: string, ctx: AssociationContext): Promise<{ rank: number | null; text: string }> {
  const hit = ctx.hits.get(id);
  if (hit) return { rank: hit.rank, text: hit.text };
  const record = await ctx.source.get(id);
  return { rank: null, text: record?.text ?? `(memory ${id} is gone)` };
}

function memoryRef(memory: { rank: number | null; text: string }): HTMLElement {
  return h('span', { class: 'assoc-memory' }, memory.rank !== null && h('span', { class: 'assoc-rank' }, `#${memory.rank} `), h('span', { class: 'assoc-text' }, clip(memory.text)));
}

/** Why an associative hit came in: the path, then its score as the associate stage made it. */
async function why(hit: Hit, ctx: AssociationContext): Promise<HTMLElement> {
  const path = hit.explain.associative!;
  const e = hit.explain;
  const via = await described(path.via, ctx);
  const bridge = path.bridge !== undefined ? await described(path.bridge, ctx) : null;
  const score =
    `score ${fixed(hit.score, 4)} = fused ${fixed(e.fused, 4)} × recency ${fixed(e.recency, 3)} × boost ${fixed(e.boost, 3)}` +
    (e.superseded ? ' × superseded penalty' : '');
  const fused = `fused ${fixed(e.fused, 4)} = fused of the hit it came through ${fixed(path.viaFused, 4)} × calibrated cosine ${fixed(path.similarity, 3)} × weight ${fixed(path.weight, 3)}`;
  const row = (name: string, ...value: (Node | string)[]) => h('div', { class: 'fig' }, h('dt', {}, name), h('dd', {}, ...value));
  return h(
    'div',
    { class: 'assoc-why' },
    h('p', {}, bridge ? 'Came in on a second hop (a bridge), not from the search legs:' : 'Came in through an association, not from the search legs:'),
    h(
      'dl',
      {},
      row('via', memoryRef(via)),
      bridge && row('bridge', memoryRef(bridge)),
      row('weight', bridge ? `${fixed(path.weight, 3)} (w₁ · w₂ along both hops)` : fixed(path.weight, 3)),
      row('cosine', e.cosine === null ? '—' : fixed(e.cosine, 3)),
      row('fused', fused),
      row('score', score),
    ),
  );
}

async function edges(hit: Hit, ctx: AssociationContext): Promise<HTMLElement> {
  const related = await ctx.source.related(hit.id);
  if (related.length === 0) return h('p', { class: 'assoc-none muted' }, 'No associations yet: they form when a search returns this memory together with others (with Reinforce on, or through Replay questions).');
  const items = await Promise.all(
    related.map(async (edge) => {
      const other = await described(edge.id, ctx);
      const followed = edge.weight >= ctx.floor;
      return h(
        'li',
        { dataset: { id: edge.id }, class: followed ? 'followed' : 'weak' },
        h('span', { class: 'assoc-weight', title: followed ? `at or above the floor ${ctx.floor}: followed when associations are on` : `below the floor ${ctx.floor}: not followed yet` }, fixed(edge.weight, 3)),
        ' ',
        memoryRef(other),
        ' ',
        h('small', { class: 'muted' }, `last together ${formatAge(edge.lastAt, ctx.now)}`),
      );
    }),
  );
  return h('div', {}, h('p', { class: 'muted' }, `${related.length} association${related.length === 1 ? '' : 's'}, weight after decay (followed from ${ctx.floor}):`), h('ol', { class: 'assoc-edges' }, ...items));
}

async function fill(body: HTMLElement, hit: Hit, ctx: AssociationContext): Promise<void> {
  body.replaceChildren(h('p', { class: 'muted' }, 'loading…'));
  body.dataset.state = 'loading';
  try {
    const parts = await Promise.all([hit.explain.associative ? why(hit, ctx) : null, edges(hit, ctx)]);
    body.replaceChildren(...parts.filter((p): p is HTMLElement => p !== null));
    body.dataset.state = 'loaded';
  } catch (error) {
    body.replaceChildren(h('p', { class: 'error' }, `Associations unavailable: ${error instanceof Error ? error.message : String(error)}`));
    body.dataset.state = 'failed';
  }
}

/**
 * A folded view under a hit (a disclosure button rather than <details>, which the XSS test counts as injected
 * markup); it reads the associations when opened, and again at each render while it stays open.
 */
export function associationView(hit: Hit, ctx: AssociationContext): HTMLElement {
  const bodyId = `assoc-${crypto.randomUUID()}`;
  const body = h('div', { class: 'assoc-body', id: bodyId, hidden: true });
  const label = hit.explain.associative ? 'Associations · why it came in' : 'Associations';
  const toggle = h('button', { type: 'button', class: 'assoc-toggle', 'aria-expanded': 'false', 'aria-controls': bodyId }, label);
  const show = (open: boolean) => {
    toggle.setAttribute('aria-expanded', String(open));
    body.hidden = !open;
    if (open) {
      ctx.open.add(hit.id);
      void fill(body, hit, ctx);
    } else {
      ctx.open.delete(hit.id);
    }
  };
  toggle.addEventListener('click', () => show(body.hidden));
  if (ctx.open.has(hit.id)) show(true);
  return h('div', { class: 'assoc' }, toggle, body);
}
