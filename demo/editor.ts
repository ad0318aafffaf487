/** The add/edit dialog: one form for a new memory or a patch of an existing one. */
import type { MemoryRecord } from '../src/index.js';
import { byId } from './dom.js';
import { localDate } from './controls.js';

export interface EditorFields {
  text: string;
  createdAt: number;
  kind: string | null;
  project: string | null;
  tags: string[];
  priority: number;
  pinned: boolean;
  /** 0–1, or null for none (a patch with null clears it). */
  quality: number | null;
}

function localDateTime(ms: number): string {
  const d = new Date(ms);
  return `${localDate(ms)}T${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

/** Opens the dialog; resolves with the fields on Save, null on Cancel or Escape. */
export function editMemory(memory: MemoryRecord | null, suggestions: { projects: string[]; kinds: string[] }): Promise<EditorFields | null> {
  const dialog = byId<HTMLDialogElement>('editor');
  const form = byId<HTMLFormElement>('editor-form');
  const field = <T extends HTMLElement>(name: string) => form.elements.namedItem(name) as unknown as T;
  const text = field<HTMLTextAreaElement>('text');
  const createdAt = field<HTMLInputElement>('createdAt');
  const kind = field<HTMLInputElement>('kind');
  const project = field<HTMLInputElement>('project');
  const tags = field<HTMLInputElement>('tags');
  const priority = field<HTMLInputElement>('priority');
  const pinned = field<HTMLInputElement>('pinned');
  const quality = field<HTMLInputElement>('quality');
  const priorityOut = byId<HTMLOutputElement>('editor-priority-out');

  byId('editor-title').textContent = memory ? 'Edit memory' : 'Add a memory';
  byId('editor-projects').replaceChildren(...suggestions.projects.map((value) => Object.assign(document.createElement('option'), { value })));
  byId('editor-kinds').replaceChildren(...suggestions.kinds.map((value) => Object.assign(document.createElement('option'), { value })));
  text.value = memory?.text ?? '';
  createdAt.value = localDateTime(memory?.createdAt ?? Date.now());
  kind.value = memory?.kind ?? '';
  project.value = memory?.project ?? '';
  tags.value = memory?.tags.join(', ') ?? '';
  priority.value = String(memory?.priority ?? 1);
  pinned.checked = memory?.pinned ?? false;
  quality.value = memory?.quality === undefined ? '' : String(memory.quality);
  const showPriority = () => (priorityOut.textContent = `×${Number(priority.value).toFixed(1)}`);
  priority.oninput = showPriority;
  showPriority();

  dialog.returnValue = '';
  dialog.showModal();
  text.focus();
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        if (dialog.returnValue !== 'save') return resolve(null);
        const when = new Date(createdAt.value).getTime();
        resolve({
          text: text.value.trim(),
          createdAt: Number.isFinite(when) ? when : Date.now(),
          kind: kind.value.trim() || null,
          project: project.value.trim() || null,
          tags: tags.value.split(',').map((t) => t.trim()).filter(Boolean),
          priority: Number(priority.value),
          pinned: pinned.checked,
          quality: quality.value.trim() === '' || !Number.isFinite(Number(quality.value)) ? null : Math.min(1, Math.max(0, Number(quality.value))),
        });
      },
      { once: true },
    );
  });
}
