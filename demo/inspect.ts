/** The trace as a waterfall, the engine's parts (model, device, storage), and the assembled context. */
import type { AssembledContext, Trace } from '../src/index.js';
import { h } from './dom.js';

/** `engram-glove-100d@q8/wasm` → model and device; ids without a device suffix keep it all as the model. */
export function splitEmbedderId(id: string | null): { model: string; device: string } {
  if (!id) return { model: 'none (lexical only)', device: '—' };
  const slash = id.lastIndexOf('/');
  const device = slash > 0 ? id.slice(slash + 1) : '';
  return ['webgpu', 'wasm', 'cpu'].includes(device) ? { model: id.slice(0, slash), device } : { model: id, device: '—' };
}

const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));

export function renderTrace(root: HTMLElement, trace: Trace): void {
  const total = Math.max(trace.totalMs, trace.stages.reduce((sum, s) => sum + s.ms, 0), 1e-6);
  let offset = 0;
  const rows = trace.stages.map((stage) => {
    const left = (offset / total) * 100;
    const width = (stage.ms / total) * 100;
    offset += stage.ms;
    return h(
      'tr',
      { title: stage.note ?? '' },
      h('th', { scope: 'row' }, stage.name, stage.note ? h('small', { class: 'note' }, stage.note) : null),
      h('td', { class: 'counts' }, `${stage.in} → ${stage.out}`),
      h('td', { class: 'wf' }, h('div', { class: `wf-bar stage-${stage.name}`, style: { 'margin-left': `${left.toFixed(2)}%`, width: `max(2px, ${width.toFixed(2)}%)` } })),
      h('td', { class: 'ms' }, ms(stage.ms)),
    );
  });
  root.replaceChildren(
    h('p', { class: 'trace-summary' }, h('strong', {}, trace.mode), ` search in ${ms(trace.totalMs)} ms`),
    h(
      'table',
      { class: 'waterfall' },
      h('caption', { class: 'visually-hidden' }, 'Pipeline stages: candidates in and out, and time'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'stage'), h('th', { scope: 'col' }, 'in → out'), h('th', { scope: 'col' }, 'time'), h('th', { scope: 'col' }, 'ms'))),
      h('tbody', {}, ...rows),
    ),
  );
}

export interface EngineFacts {
  embedder: string | null;
  storage: string;
  persisted: boolean;
}

export function renderFacts(root: HTMLElement, facts: EngineFacts): void {
  const { model, device } = splitEmbedderId(facts.embedder);
  const row = (name: string, value: string) => h('div', {}, h('dt', {}, name), h('dd', {}, value));
  root.replaceChildren(
    row('model', model),
    row('device', device),
    row('storage', facts.storage),
    row('persistence', facts.persisted ? 'persisted (survives storage pressure)' : 'best effort'),
  );
}

export function renderContext(meter: HTMLElement, text: HTMLElement, context: AssembledContext): void {
  const share = context.budget > 0 ? Math.min(1, context.tokens / context.budget) : 0;
  meter.replaceChildren(
    h('div', { class: 'budget-bar', role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': String(context.budget), 'aria-valuenow': String(context.tokens), 'aria-label': 'tokens used of the budget' }, h('span', { style: { width: `${(share * 100).toFixed(1)}%` } })),
    h('p', {}, h('strong', {}, `${context.tokens}`), ` of ${context.budget} tokens · ${context.ids.length} ${context.ids.length === 1 ? 'memory' : 'memories'}`),
  );
  text.textContent = context.text || '(empty: no hit fits the budget)';
}
