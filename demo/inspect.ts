/**
 * The trace as a waterfall (with each stage's language-model tokens), the query's understanding, every query list
 * searched (the HyDE text marked), the engine's parts (model, device, storage), and the assembled context.
 */
import type { AssembledContext, Trace, TraceQuery, TraceStage } from '../src/index.js';
import { h } from './dom.js';

/** `engram-glove-100d@q8/wasm` → model and device; ids without a device suffix keep it all as the model. */
export function splitEmbedderId(id: string | null): { model: string; device: string } {
  if (!id) return { model: 'none (lexical only)', device: '—' };
  const slash = id.lastIndexOf('/');
  const device = slash > 0 ? id.slice(slash + 1) : '';
  return ['webgpu', 'wasm', 'cpu'].includes(device) ? { model: id.slice(0, slash), device } : { model: id, device: '—' };
}

const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));

const SOURCE_LABEL: Record<TraceQuery['source'], string> = { original: 'your query', llm: 'LLM', offline: 'offline', hyde: 'HyDE' };

const tokens = (stage: TraceStage) => (stage.promptTokens || stage.completionTokens ? `${stage.promptTokens} / ${stage.completionTokens}` : '—');

function renderUnderstanding(trace: Trace): HTMLElement {
  const u = trace.understanding;
  const row = (name: string, value: string) => h('div', {}, h('dt', {}, name), h('dd', {}, value));
  return h(
    'section',
    { class: 'understanding', 'aria-label': 'Query understanding' },
    h('h3', {}, 'Understanding'),
    h('dl', { class: 'facts' }, row('type', u.type), row('complexity', u.complexity), row('signals', u.signals.length ? u.signals.join(', ') : 'none'), row('by', u.by)),
  );
}

/** Every list the legs searched, in `trace.queries` order (which `explain.lists.ranks` follows). */
function renderQueries(trace: Trace): HTMLElement {
  const rows = trace.queries.map((q, i) =>
    h(
      'tr',
      { class: `query-${q.source}` },
      h('td', { class: 'query-index' }, `q${i + 1}`),
      h('td', {}, h('span', { class: `source source-${q.source}`, title: q.source === 'hyde' ? 'hypothetical answer, searched by the vector leg only' : q.source }, SOURCE_LABEL[q.source])),
      h('td', { class: 'query-weight' }, `×${q.weight}`),
      h('td', { class: 'query-text' }, q.source === 'hyde' ? h('blockquote', { class: 'hyde-text' }, q.text) : q.text),
    ),
  );
  return h(
    'section',
    { class: 'queries', 'aria-label': 'Query lists' },
    h('h3', {}, `Query lists (${trace.queries.length})`),
    h(
      'table',
      { class: 'query-lists' },
      h('caption', { class: 'visually-hidden' }, 'Each query list searched: its source, its weight in the list fusion, and its text'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, 'source'), h('th', { scope: 'col' }, 'weight'), h('th', { scope: 'col' }, 'text'))),
      h('tbody', {}, ...rows),
    ),
  );
}

/** `model` names the language model the demo had picked for this search (the trace does not carry it). */
export function renderTrace(root: HTMLElement, trace: Trace, model = 'none'): void {
  const total = Math.max(trace.totalMs, trace.stages.reduce((sum, s) => sum + s.ms, 0), 1e-6);
  let offset = 0;
  const rows = trace.stages.map((stage) => {
    const left = (offset / total) * 100;
    const width = (stage.ms / total) * 100;
    offset += stage.ms;
    return h(
      'tr',
      { title: stage.note ?? '', dataset: { stage: stage.name } },
      h('th', { scope: 'row' }, stage.name, stage.note ? h('small', { class: 'note' }, stage.note) : null),
      h('td', { class: 'counts' }, `${stage.in} → ${stage.out}`),
      h('td', { class: 'wf' }, h('div', { class: `wf-bar stage-${stage.name}`, style: { 'margin-left': `${left.toFixed(2)}%`, width: `max(2px, ${width.toFixed(2)}%)` } })),
      h('td', { class: 'ms' }, ms(stage.ms)),
      h('td', { class: 'tokens', title: 'prompt / completion tokens of the stage’s language-model call' }, tokens(stage)),
    );
  });
  root.replaceChildren(
    h('p', { class: 'trace-summary' }, h('strong', {}, trace.mode), ` search in ${ms(trace.totalMs)} ms`),
    h(
      'table',
      { class: 'waterfall' },
      h('caption', { class: 'visually-hidden' }, 'Pipeline stages: candidates in and out, time, and language-model tokens'),
      h(
        'thead',
        {},
        h('tr', {}, h('th', { scope: 'col' }, 'stage'), h('th', { scope: 'col' }, 'in → out'), h('th', { scope: 'col' }, 'time'), h('th', { scope: 'col' }, 'ms'), h('th', { scope: 'col', title: 'prompt / completion' }, 'tokens')),
      ),
      h('tbody', {}, ...rows),
    ),
    h(
      'p',
      { class: 'llm-totals', title: 'sums over the stages (trace.promptTokens, completionTokens, totalTokens, llmCalls)' },
      `language model: ${model} · ${trace.llmCalls} ${trace.llmCalls === 1 ? 'call' : 'calls'} · tokens ${trace.promptTokens} prompt + ${trace.completionTokens} completion = ${trace.totalTokens}`,
    ),
    renderUnderstanding(trace),
    renderQueries(trace),
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
