/**
 * "Replay questions": asks a list of questions several times in order, with touch and reinforcement on and
 * associations followed, so a person can watch the memory learn from use: the associations formed so far, and the
 * hits that came in through one. Each pass is a session of its own, a few days after the one before (the last pass
 * at "now"), as the library's replay harness does, so spacing raises stability and use can promote memories to core.
 */
import { DAY_MS } from '../src/internals.js';
import type { Memory, SearchOptions, SearchResult } from '../src/index.js';
import type { ControlState } from './controls.js';
import { describeError } from './database.js';
import { formatDate, h } from './dom.js';

// A pause between questions, so the results can be watched changing.
const PAUSE_MS = 80;
const MAX_PASSES = 20;
const MAX_GAP_DAYS = 60;
const clip = (text: string, max = 120) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export interface ReplayDeps {
  /** The open memory, or null. */
  memory(): Memory | null;
  /** The controls' state and the search options it makes. */
  current(): { state: ControlState; options: Partial<SearchOptions> };
  /** Shows one replayed search in the results, as if asked in the query box. */
  show(query: string, result: SearchResult, now: number): void;
  /** Called when a replay starts and ends (the page disables its data actions meanwhile). */
  running(on: boolean): void;
  /** Called after the replay, to search the query box again with the controls' own options. */
  done(): void;
  message(text: string, kind?: 'info' | 'error'): void;
}

export interface Replay {
  /** Enables the button once a memory is open. */
  setReady(ready: boolean): void;
  /** Questions the page knows besides the sample (an imported LoCoMo conversation's), offered with a button. */
  offer(label: string, questions: readonly string[]): void;
  stop(): void;
}

function whole(input: HTMLInputElement, min: number, max: number, fallback: number): number {
  const n = Number(input.value);
  return Number.isFinite(n) ? Math.min(max, Math.max(min, Math.round(n))) : fallback;
}

export function mountReplay(root: HTMLElement, sample: readonly string[], deps: ReplayDeps): Replay {
  const textarea = root.querySelector<HTMLTextAreaElement>('#replay-questions')!;
  const passesInput = root.querySelector<HTMLInputElement>('#replay-passes')!;
  const gapInput = root.querySelector<HTMLInputElement>('#replay-gap')!;
  const runButton = root.querySelector<HTMLButtonElement>('#replay-run')!;
  const stopButton = root.querySelector<HTMLButtonElement>('#replay-stop')!;
  const sampleButton = root.querySelector<HTMLButtonElement>('#replay-sample')!;
  const offeredButton = root.querySelector<HTMLButtonElement>('#replay-offered')!;
  const progress = root.querySelector<HTMLElement>('#replay-progress')!;
  const passLog = root.querySelector<HTMLOListElement>('#replay-log')!;
  const becameList = root.querySelector<HTMLUListElement>('#replay-associative')!;

  let ready = false;
  let running = false;
  let stopping = false;
  let offered: readonly string[] = [];

  textarea.value = sample.join('\n');
  const refreshButtons = () => {
    runButton.disabled = !ready || running;
    stopButton.disabled = !running;
  };
  sampleButton.addEventListener('click', () => (textarea.value = sample.join('\n')));
  offeredButton.addEventListener('click', () => (textarea.value = offered.join('\n')));
  stopButton.addEventListener('click', () => (stopping = true));
  runButton.addEventListener('click', () => void run());

  async function run(): Promise<void> {
    const memory = deps.memory();
    if (!memory || running) return;
    const questions = textarea.value.split('\n').map((q) => q.trim()).filter(Boolean);
    if (questions.length === 0) {
      progress.textContent = 'No questions to replay: write one per line.';
      return;
    }
    const passes = whole(passesInput, 1, MAX_PASSES, 5);
    const gapDays = whole(gapInput, 0, MAX_GAP_DAYS, 7);
    // One snapshot of the controls for the whole replay; replay always reinforces and follows associations.
    const { state, options } = deps.current();
    const replayOptions: Partial<SearchOptions> = {
      ...options,
      touch: true,
      reinforce: true,
      associations: { floor: state.associationFloor, bridges: state.associationBridges, bridgeMinCosine: state.bridgeMinCosine },
    };
    const end = options.now ?? Date.now();
    const runId = Date.now().toString(36);
    running = true;
    stopping = false;
    refreshButtons();
    deps.running(true);
    progress.textContent = `Replaying ${questions.length} questions × ${passes} passes…`;
    passLog.replaceChildren();
    becameList.replaceChildren();
    const seen = new Set<string>();
    try {
      const start = await memory.status();
      let status = start;
      for (let pass = 1; pass <= passes && !stopping; pass++) {
        const now = end - (passes - pass) * gapDays * DAY_MS;
        const before = status.associations;
        let associative = 0;
        // What the associate stage brought in before the top k were picked: learning shows there first.
        let broughtIn = 0;
        for (let i = 0; i < questions.length && !stopping; i++) {
          if (deps.memory() !== memory) throw new Error('the memory was closed');
          const question = questions[i]!;
          const result = await memory.search(question, { ...replayOptions, now, session: `replay-${runId}-${pass}` });
          deps.show(question, result, now);
          broughtIn += result.trace.stages.find((stage) => stage.name === 'associate')?.out ?? 0;
          status = await memory.status();
          for (const hit of result.hits) {
            const path = hit.explain.associative;
            if (!path) continue;
            associative++;
            const key = `${hit.id}\n${path.via}\n${path.bridge ?? ''}`;
            if (seen.has(key)) continue;
            seen.add(key);
            const via = result.hits.find((other) => other.id === path.via)?.text ?? (await memory.get(path.via))?.text ?? path.via;
            becameList.append(
              h(
                'li',
                { dataset: { id: hit.id } },
                h('span', { class: 'muted' }, `pass ${pass} · `),
                h('q', {}, question),
                ': ',
                h('span', { class: 'replay-hit' }, clip(hit.text)),
                h('span', { class: 'muted' }, path.bridge !== undefined ? ' via a bridge from ' : ' via '),
                h('span', { class: 'replay-via' }, clip(via)),
                h('span', { class: 'muted' }, ` (w ${path.weight.toFixed(2)})`),
              ),
            );
          }
          progress.textContent =
            `pass ${pass}/${passes} · question ${i + 1}/${questions.length} · ${status.associations} associations ` +
            `(+${status.associations - start.associations}) · ${seen.size} became associative · ${status.core} core`;
          await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        }
        passLog.append(
          h(
            'li',
            {},
            `pass ${pass} (${formatDate(now)}): associations ${before} → ${status.associations}; the associate stage brought in ` +
              `${broughtIn} candidate${broughtIn === 1 ? '' : 's'}, ${associative} of them among the hits; ${status.core} core`,
          ),
        );
      }
      if (seen.size === 0) {
        becameList.append(
          h('li', { class: 'muted' }, 'None among the hits yet: the questions’ own hits are direct. Tick Follow associations and ask a related question to see memories come in through what formed.'),
        );
      }
      const summary = stopping ? 'Replay stopped' : `Replayed ${questions.length} questions × ${passes} passes`;
      progress.textContent = `${summary}: ${status.associations} associations (+${status.associations - start.associations}), ${seen.size} became associative, ${status.core} core.`;
      deps.message(summary);
    } catch (error) {
      const text = `Replay failed: ${describeError(error)}`;
      progress.textContent = text;
      deps.message(text, 'error');
    } finally {
      running = false;
      refreshButtons();
      deps.running(false);
      deps.done();
    }
  }

  refreshButtons();
  return {
    setReady(next) {
      ready = next;
      refreshButtons();
    },
    offer(label, questions) {
      offered = questions;
      offeredButton.textContent = label;
      offeredButton.hidden = questions.length === 0;
    },
    stop() {
      stopping = true;
    },
  };
}
