/**
 * The associations and provenance links of a store write (store.ts), checked in full before a store applies any
 * of it: every store refuses the same malformed edge with STORE_FAILED, before its transaction starts.
 */
import { EngramError, ErrorCode } from '../errors.js';
import type { AssociationEdge, StoreWrite } from './store.js';
import type { Link } from '../types.js';

// Keys are JSON so that no id, whatever characters it holds, can make two pairs share one.
/** One key per unordered pair (`a < b`). */
export function edgeKey(a: string, b: string): string {
  return JSON.stringify([a, b]);
}

/** One key per (from, to, kind). */
export function linkKey(link: Pick<Link, 'from' | 'to' | 'kind'>): string {
  return JSON.stringify([link.from, link.to, link.kind]);
}

function refuse(what: string): never {
  throw new EngramError(ErrorCode.STORE_FAILED, `a malformed ${what} cannot be stored`);
}

const isId = (value: unknown): value is string => typeof value === 'string' && value !== '';
const isUnit = (value: unknown): value is number => typeof value === 'number' && value >= 0 && value <= 1;

export function checkAssociations(change: StoreWrite['associations']): { put: AssociationEdge[]; remove: [string, string][] } {
  const put = (change?.put ?? []).map((edge) => {
    if (!isId(edge?.a) || !isId(edge.b) || !(edge.a < edge.b) || !isUnit(edge.weight) || !Number.isFinite(edge.lastAt)) refuse('association');
    return { a: edge.a, b: edge.b, weight: edge.weight, lastAt: edge.lastAt };
  });
  const remove = (change?.remove ?? []).map((pair) => {
    if (!Array.isArray(pair) || !isId(pair[0]) || !isId(pair[1])) refuse('association pair');
    return [pair[0], pair[1]] as [string, string];
  });
  return { put, remove };
}

export function checkLinks(change: StoreWrite['links']): { put: Link[]; remove: Pick<Link, 'from' | 'to' | 'kind'>[] } {
  const put = (change?.put ?? []).map((link) => {
    if (!isId(link?.from) || !isId(link.to) || !isId(link.kind) || !isUnit(link.confidence) || !Number.isFinite(link.createdAt)) refuse('link');
    return { from: link.from, to: link.to, kind: link.kind, confidence: link.confidence, createdAt: link.createdAt };
  });
  const remove = (change?.remove ?? []).map((link) => {
    if (!isId(link?.from) || !isId(link.to) || !isId(link.kind)) refuse('link key');
    return { from: link.from, to: link.to, kind: link.kind };
  });
  return { put, remove };
}
