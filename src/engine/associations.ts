/**
 * Associations between memories (the cognitive-memory seed): each search strengthens the pair of every two direct
 * hits, and a weight fades with time since the pair last formed:
 *   w(now) = w · exp(−days since lastAt / decayDays),   strengthening: w ← min(1, w(now) + step), lastAt ← now.
 * Stored as (w, lastAt) and decayed when read, so nothing has to be rewritten as time passes. Each memory keeps at
 * most `maxPerMemory` edges; a new one evicts its end's weakest (after decay).
 */
import type { AssociationEdge, StoreWrite } from '../store/store.js';
import type { AssociationReader } from '../search/state.js';
import type { Association } from '../types.js';
import { DAY_MS } from '../util/time.js';

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
/**
 * An edge as the graph holds it: `strength` is log(weight) + lastAt / τ, which orders edges as their decayed
 * weights do at any one moment, so finding the weakest needs no exp per edge.
 */
interface HeldEdge extends AssociationEdge {
  strength: number;
}

export class AssociationGraph implements AssociationReader {
  /** id → (other id → the edge, shared by both ends). */
  private readonly byMemory = new Map<string, Map<string, HeldEdge>>();
  private edges = 0;
  private readonly decayMs: number;

  constructor(private readonly rules: AssociationRules) {
    this.decayMs = rules.decayDays * DAY_MS;
  }

  get size(): number {
    return this.edges;
  }

  load(edges: readonly AssociationEdge[]): void {
    for (const { a, b, weight, lastAt } of edges) this.insert(this.held(a, b, weight, lastAt));
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
   * Strengthens every pair of `ids` at `now`. Returns every edge created, changed or evicted: the caller writes
   * each as it then is (`asWrite`).
   */
  strengthen(ids: readonly string[], now: number): AssociationEdge[] {
    const distinct = [...new Set(ids)];
    const changed: AssociationEdge[] = [];
    for (let i = 0; i < distinct.length; i++) {
      for (let j = i + 1; j < distinct.length; j++) {
        const [a, b] = distinct[i]! < distinct[j]! ? [distinct[i]!, distinct[j]!] : [distinct[j]!, distinct[i]!];
        let edge = this.byMemory.get(a)?.get(b);
        if (edge) {
          const weight = Math.min(1, decayedWeight(edge, now, this.rules.decayDays) + this.rules.step);
          Object.assign(edge, { weight, lastAt: now, strength: this.strengthOf(weight, now) });
        } else {
          for (const end of [a, b]) {
            const evicted = this.evictWeakest(end);
            if (evicted) changed.push(evicted);
          }
          edge = this.held(a, b, Math.min(1, this.rules.step), now);
          this.insert(edge);
        }
        changed.push(edge);
      }
    }
    return changed;
  }

  /**
   * The store write that brings these edges' rows to what they now are: an edge the graph still holds is put, one
   * it dropped is removed (removals apply before puts, so a pair evicted and formed again is put).
   */
  asWrite(edges: Iterable<AssociationEdge>): NonNullable<StoreWrite['associations']> {
    const put: AssociationEdge[] = [];
    const remove: [string, string][] = [];
    for (const edge of edges) {
      if (this.byMemory.get(edge.a)?.get(edge.b) === edge) put.push({ a: edge.a, b: edge.b, weight: edge.weight, lastAt: edge.lastAt });
      else remove.push([edge.a, edge.b]);
    }
    return { put, remove };
  }

  /**
   * Received edges (sync): each replaces this graph's edge of its pair when stronger, so every device keeps the
   * larger decayed weight (strengths order edges as decayed weights do at any moment). Returns what changed, for
   * `asWrite`.
   */
  mergeStronger(edges: readonly AssociationEdge[]): AssociationEdge[] {
    const changed: AssociationEdge[] = [];
    for (const { a, b, weight, lastAt } of edges) {
      const incoming = this.held(a, b, weight, lastAt);
      const edge = this.byMemory.get(a)?.get(b);
      if (edge) {
        if (incoming.strength <= edge.strength) continue;
        Object.assign(edge, { weight, lastAt, strength: incoming.strength });
        changed.push(edge);
        continue;
      }
      for (const end of [a, b]) {
        const evicted = this.evictWeakest(end);
        if (evicted) changed.push(evicted);
      }
      this.insert(incoming);
      changed.push(incoming);
    }
    return changed;
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

  private strengthOf(weight: number, lastAt: number): number {
    return Math.log(weight) + lastAt / this.decayMs;
  }

  private held(a: string, b: string, weight: number, lastAt: number): HeldEdge {
    return { a, b, weight, lastAt, strength: this.strengthOf(weight, lastAt) };
  }

  private insert(edge: HeldEdge): void {
    for (const [end, other] of [[edge.a, edge.b], [edge.b, edge.a]] as const) {
      let map = this.byMemory.get(end);
      if (!map) this.byMemory.set(end, (map = new Map()));
      if (end === edge.a && !map.has(other)) this.edges++;
      map.set(other, edge);
    }
  }

  /** Makes room for one more edge of `id`: the edge dropped, if it was full. */
  private evictWeakest(id: string): HeldEdge | null {
    const mine = this.byMemory.get(id);
    if (!mine || mine.size < this.rules.maxPerMemory) return null;
    let weakest: HeldEdge | null = null;
    for (const edge of mine.values()) if (!weakest || edge.strength < weakest.strength) weakest = edge;
    if (!weakest) return null;
    for (const [end, other] of [[weakest.a, weakest.b], [weakest.b, weakest.a]] as const) {
      const map = this.byMemory.get(end);
      map?.delete(other);
      if (map?.size === 0) this.byMemory.delete(end);
    }
    this.edges--;
    return weakest;
  }
}
