/** Reading and writing the demo's files: JSON and NDJSON memory lists, and LoCoMo conversations. */
import { readLocomoConversation, type LocomoQuestion } from '../bench/lib/locomo.js';
import type { MemoryInput, MemoryRecord } from '../src/index.js';

export interface ImportBatch {
  format: 'json' | 'ndjson' | 'locomo';
  /** Full records from an export (re-imported as they were), or plain inputs to add. */
  records: MemoryRecord[];
  inputs: MemoryInput[];
  /** LoCoMo questions with their evidence ids, offered as queries. */
  questions: LocomoQuestion[];
  /** LoCoMo: when the last session happened, the natural "now" to replay the conversation at. */
  lastSessionAt?: number;
}

export function parseImport(text: string, fileName: string): ImportBatch {
  const source = fileName.replace(/\.[^.]+$/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fromItems(parseNdjson(text, fileName), 'ndjson', fileName);
  }
  if (isLocomo(parsed)) return fromLocomo([parsed], source);
  if (Array.isArray(parsed) && parsed.length > 0 && parsed.every(isLocomo)) return fromLocomo(parsed, source);
  const items = Array.isArray(parsed) ? parsed : isObject(parsed) && Array.isArray(parsed.memories) ? parsed.memories : null;
  if (!items) throw new Error(`${fileName}: expected a JSON array of memories, an object with a "memories" array, or a LoCoMo conversation`);
  return fromItems(items, 'json', fileName);
}

function parseNdjson(text: string, fileName: string): unknown[] {
  return text.split(/\r?\n/).flatMap((line, index) => {
    if (!line.trim()) return [];
    try {
      return [JSON.parse(line) as unknown];
    } catch {
      throw new Error(`${fileName}: line ${index + 1} is neither part of a JSON document nor a JSON line`);
    }
  });
}

function fromItems(items: unknown[], format: 'json' | 'ndjson', fileName: string): ImportBatch {
  items.forEach((item, index) => {
    if (!isObject(item) || typeof item.text !== 'string') throw new Error(`${fileName}: item ${index + 1} has no "text" string`);
  });
  // An export carries bookkeeping (access counts, supersession) that only `import` restores.
  const exported = items.every((item) => isObject(item) && typeof item.id === 'string' && typeof item.accessCount === 'number');
  return exported
    ? { format, records: items as MemoryRecord[], inputs: [], questions: [] }
    : { format, records: [], inputs: items as MemoryInput[], questions: [] };
}

function fromLocomo(conversations: unknown[], source: string): ImportBatch {
  const batch: ImportBatch = { format: 'locomo', records: [], inputs: [], questions: [] };
  conversations.forEach((conversation, index) => {
    const sample = isObject(conversation) && typeof conversation.sample_id === 'string' ? conversation.sample_id : null;
    // One project per conversation: the current-project boost and filter then work per conversation.
    const project = `locomo-${sample ?? (conversations.length > 1 ? `${source}-${index + 1}` : source)}`;
    const { memories, questions, lastSessionAt } = readLocomoConversation(conversation, { idPrefix: `${project}:` });
    batch.inputs.push(...memories.map((memory) => ({ ...memory, project })));
    batch.questions.push(...questions);
    batch.lastSessionAt = Math.max(batch.lastSessionAt ?? -Infinity, lastSessionAt);
  });
  return batch;
}

function isLocomo(value: unknown): boolean {
  if (!isObject(value)) return false;
  const sessions = isObject(value.conversation) ? value.conversation : value;
  return Array.isArray(sessions.session_1) && typeof sessions.session_1_date_time === 'string';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function serialise(records: MemoryRecord[], format: 'json' | 'ndjson'): string {
  return format === 'json' ? JSON.stringify(records, null, 2) : records.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

export function download(text: string, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = Object.assign(document.createElement('a'), { href: url, download: fileName });
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
