/**
 * Associations between memories (the cognitive-memory seed): each search strengthens the pair of every two direct
 * hits, and a weight fades with time since the pair last formed:
 *   w(now) = w · exp(−days since lastAt / decayDays),   strengthening: w ← min(1, w(now) + step), lastAt ← now.
 * Stored as (w, lastAt) and decayed when read, so nothing has to be rewritten as time passes. Each memory keeps at
 * most `maxPerMemory` edges; a new one evicts its end's weakest (after decay).
 */
import { DAY_MS } from '../util/time.js';
import { edgeKey, splitEdgeKey } from '../store/graph-rows.js';
import type { AssociationEdge } from '../store/store.js';
import type { Association } from '../types.js';

export interface AssociationRules {
  /** Weight a co-retrieval adds. */
  step: number;
  /** Days for a weight to fall to 1/e without use. */
  decayDays: number;
  /** Edges kept per memory. */
  maxPerMemory: number;
}

/** A decayed weight. */
export function decayedWeight(edge: Pick<AssociationEdge, 'weight' | 'lastAt'>, now: number, decayDays: number): number {
  const days = Math.max(0, now - edge.lastAt) / DAY_MS;
  return edge.weight * Math.exp(-days / decayDays);
}

/** What the `associate` stage reads. */
export interface AssociationReader {
  /** The memory's associations with their decayed weights at `now`, at least `floor`. */
  around(id: string, now: number, floor: number): { id: string; weight: number }[];
}

export class AssociationGraph implements AssociationReader {
  /** id → (other id → the edge, shared by both ends). */
  private readonly byMemory = new Map<string, Map<string, AssociationEdge>>();
  private edges = 0;

  constructor(private readonly rules: AssociationRules) {}

  get size(): number {
    return this.edges;
  }

  load(edges: readonly AssociationEdge[]): void {
    for (const edge of edges) this.insert({ ...edge });
  }

  edge(key: string): AssociationEdge | undefined {
    const [a, b] = splitEdgeKey(key);
    return this.byMemory.get(a)?.get(b);
  }

  around(id: string, now: number, floor: number): { id: string; weight: number }[] {
    const out: { id: string; weight: number }[] = [];
    for (const [other, edge] of this.byMemory.get(id) ?? []) {
      const weight = decayedWeight(edge, now, this.rules.decayDays);
      if (weight >= floor) out.push({ id: other, weight });
    }
    return out;
  }

  /** Every association of `id`, strongest first. */
  related(id: string, now: number): Association[] {
    return [...(this.byMemory.get(id) ?? [])]
      .map(([other, edge]) => ({ id: other, weight: decayedWeight(edge, now, this.rules.decayDays), lastAt: edge.lastAt }))
      .sort((x, y) => y.weight - x.weight || (x.id < y.id ? -1 : 1));
  }

  /**
   * Strengthens every pair of `ids` at `now`. Returns the keys of every edge created, changed or evicted: the
   * caller writes each as it then is (present: put; gone: remove).
   */
  strengthen(ids: readonly string[], now: number): string[] {
    const distinct = [...new Set(ids)];
    const changed: string[] = [];
    for (let i = 0; i < distinct.length; i++) {
      for (let j = i + 1; j < distinct.length; j++) {
        const [a, b] = distinct[i]! < distinct[j]! ? [distinct[i]!, distinct[j]!] : [distinct[j]!, distinct[i]!];
        const current = this.byMemory.get(a)?.get(b);
        if (current) {
          current.weight = Math.min(1, decayedWeight(current, now, this.rules.decayDays) + this.rules.step);
          current.lastAt = now;
        } else {
          for (const end of [a, b]) {
            const evicted = this.evictWeakest(end, now);
            if (evicted) changed.push(evicted);
          }
          this.insert({ a, b, weight: Math.min(1, this.rules.step), lastAt: now });
        }
        changed.push(edgeKey(a, b));
      }
    }
    return changed;
  }

  /** The store write that brings these edges' rows to what they now are: present ones put, gone ones removed. */
  asWrite(keys: Iterable<string>): { put: AssociationEdge[]; remove: [string, string][] } {
    const put: AssociationEdge[] = [];
    const remove: [string, string][] = [];
    for (const key of keys) {
      const edge = this.edge(key);
      if (edge) put.push({ ...edge });
      else remove.push(splitEdgeKey(key));
    }
    return { put, remove };
  }

  /** Drops every edge of a removed memory (the store drops them in the same write). */
  removeMemory(id: string): void {
    const mine = this.byMemory.get(id);
    if (!mine) return;
    for (const other of mine.keys()) {
      const theirs = this.byMemory.get(other);
      theirs?.delete(id);
      if (theirs?.size === 0) this.byMemory.delete(other);
    }
    this.edges -= mine.size;
    this.byMemory.delete(id);
  }

  private insert(edge: AssociationEdge): void {
    for (const [end, other] of [[edge.a, edge.b], [edge.b, edge.a]] as const) {
      let map = this.byMemory.get(end);
      if (!map) this.byMemory.set(end, (map = new Map()));
      if (end === edge.a && !map.has(other)) this.edges++;
      map.set(other, edge);
    }
  }

  /** Makes room for one more edge of `id`: the key of the edge dropped, if it was full. */
  private evictWeakest(id: string, now: number): string | null {
    const mine = this.byMemory.get(id);
    if (!mine || mine.size < this.rules.maxPerMemory) return null;
    let weakest: AssociationEdge | null = null;
    let weakestWeight = Infinity;
    for (const edge of mine.values()) {
      const weight = decayedWeight(edge, now, this.rules.decayDays);
      if (weight < weakestWeight) [weakest, weakestWeight] = [edge, weight];
    }
    if (!weakest) return null;
    for (const [end, other] of [[weakest.a, weakest.b], [weakest.b, weakest.a]] as const) {
      const map = this.byMemory.get(end);
      map?.delete(other);
      if (map?.size === 0) this.byMemory.delete(end);
    }
    this.edges--;
    return edgeKey(weakest.a, weakest.b);
  }
}
