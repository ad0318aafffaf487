/**
 * Provenance links an app records between memories (`memory.link(from, to, kind)`, the daemon seed's `mem_why`):
 * held in memory by both ends, stored through the store, and walked breadth first by `why`.
 */
import { invalidInput } from '../errors.js';
import { linkKey } from '../store/graph-rows.js';
import { LINK_KINDS, type Link, type LinkKind, type WhyOptions } from '../types.js';
import { describeValue } from '../util/describe.js';

const KNOWN_KINDS: ReadonlySet<string> = new Set(LINK_KINDS);

/** Most edges `why` returns. */
const MAX_WHY_EDGES = 200;
/** Deepest `why` walk. */
const MAX_WHY_DEPTH = 10;
const DEFAULT_WHY_DEPTH = 4;

export function checkLinkKind(kind: unknown): LinkKind {
  if (typeof kind !== 'string' || !KNOWN_KINDS.has(kind)) throw invalidInput(`link kind must be one of ${LINK_KINDS.join(', ')}, got ${describeValue(kind)}`);
  return kind as LinkKind;
}

export function checkConfidence(confidence: unknown): number {
  if (confidence === undefined) return 1;
  if (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1)) throw invalidInput(`link confidence must be a number from 0 to 1, got ${describeValue(confidence)}`);
  return confidence;
}

export function checkWhyOptions(options: unknown): { depth: number; direction: 'out' | 'in' | 'both' } {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidInput(`why options must be an object { depth?, direction? }, got ${describeValue(options)}`);
  const { depth = DEFAULT_WHY_DEPTH, direction = 'out' } = options as WhyOptions;
  if (!Number.isInteger(depth) || depth < 1 || depth > MAX_WHY_DEPTH) throw invalidInput(`why option depth must be an integer from 1 to ${MAX_WHY_DEPTH}, got ${describeValue(depth)}`);
  if (direction !== 'out' && direction !== 'in' && direction !== 'both') throw invalidInput(`why option direction must be 'out', 'in' or 'both', got ${describeValue(direction)}`);
  return { depth, direction };
}

export class LinkGraph {
  private readonly out = new Map<string, Map<string, Link>>();
  private readonly in = new Map<string, Map<string, Link>>();

  get size(): number {
    let n = 0;
    for (const links of this.out.values()) n += links.size;
    return n;
  }

  load(links: readonly Link[]): void {
    for (const link of links) this.set({ ...link });
  }

  has(link: Pick<Link, 'from' | 'to' | 'kind'>): boolean {
    return this.out.get(link.from)?.has(linkKey(link)) ?? false;
  }

  set(link: Link): void {
    const key = linkKey(link);
    for (const [index, end] of [[this.out, link.from], [this.in, link.to]] as const) {
      let map = index.get(end);
      if (!map) index.set(end, (map = new Map()));
      map.set(key, link);
    }
  }

  delete(link: Pick<Link, 'from' | 'to' | 'kind'>): void {
    const key = linkKey(link);
    for (const [index, end] of [[this.out, link.from], [this.in, link.to]] as const) {
      const map = index.get(end);
      map?.delete(key);
      if (map?.size === 0) index.delete(end);
    }
  }

  /** Ids of the memories with a `derives_from` link to `id` (search/state.ts ProvenanceReader). */
  derivedFrom(id: string): string[] {
    const incoming = this.in.get(id);
    if (!incoming) return [];
    const out: string[] = [];
    for (const link of incoming.values()) if (link.kind === 'derives_from') out.push(link.from);
    return out;
  }

  /** Links between `from` and `to`, of `kind` when given. */
  between(from: string, to: string, kind?: LinkKind): Link[] {
    return [...(this.out.get(from)?.values() ?? [])].filter((l) => l.to === to && (kind === undefined || l.kind === kind));
  }

  /** Drops every link of a removed memory (the store drops them in the same write). */
  removeMemory(id: string): void {
    for (const link of [...(this.out.get(id)?.values() ?? []), ...(this.in.get(id)?.values() ?? [])]) this.delete(link);
  }

  /**
   * Breadth first from `root`: each edge once, with the hop at which it was reached, in the order reached (a
   * memory's edges by creation time), at most MAX_WHY_EDGES.
   */
  walk(root: string, depth: number, direction: 'out' | 'in' | 'both'): { edges: (Link & { depth: number })[]; reached: string[]; truncated: boolean } {
    const edges: (Link & { depth: number })[] = [];
    const seenEdges = new Set<string>();
    const reached: string[] = [];
    const seen = new Set([root]);
    let frontier = [root];
    for (let hop = 1; hop <= depth && frontier.length > 0; hop++) {
      const next: string[] = [];
      for (const id of frontier) {
        const outgoing = direction === 'in' ? [] : [...(this.out.get(id)?.values() ?? [])];
        const incoming = direction === 'out' ? [] : [...(this.in.get(id)?.values() ?? [])];
        for (const link of [...outgoing, ...incoming].sort((x, y) => x.createdAt - y.createdAt)) {
          const key = linkKey(link);
          if (seenEdges.has(key)) continue;
          if (edges.length === MAX_WHY_EDGES) return { edges, reached, truncated: true };
          seenEdges.add(key);
          edges.push({ ...link, depth: hop });
          const other = link.from === id ? link.to : link.from;
          if (!seen.has(other)) {
            seen.add(other);
            reached.push(other);
            next.push(other);
          }
        }
      }
      frontier = next;
    }
    return { edges, reached, truncated: false };
  }
}
