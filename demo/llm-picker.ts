/**
 * The language-model picker: none (default), Chrome's built-in model (Prompt API), or an OpenAI-compatible
 * endpoint the user types (a local Ollama or LM Studio). Nothing is fetched and no model is touched until the
 * user picks one (and, for an endpoint, fills in a local URL) and a search asks for a language-model stage.
 *
 * The Memory is created once and `createMemory({ llm })` keeps one model for its lifetime, so the demo hands it
 * `picker.model`: a LanguageModel that delegates each call to whichever backend is picked at that moment. With
 * none picked it refuses at once (MODEL_NOT_FOUND, no request made) and the stage is skipped with a note.
 */
import { EngramError, ErrorCode, functionModel, promptApiModel, type LanguageModel, type PromptApiModel } from '../src/index.js';
import { h } from './dom.js';

export type Backend = 'none' | 'prompt-api' | 'endpoint';

const SETTINGS_KEY = 'engram-demo:llm:v1';
const EXAMPLE_URL = 'http://localhost:11434/v1';
/** Hosts the demo's CSP lets the page connect to (`connect-src`), besides its own origin. */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1']);

export interface EndpointSettings {
  /** Base URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1 (the page POSTs to `<url>/chat/completions`). */
  url: string;
  /** The `model` field of the request (Ollama needs one, e.g. `llama3.2`; LM Studio takes the loaded one). */
  model: string;
}

/** The `/chat/completions` answer, as far as it is read. */
interface ChatCompletion {
  choices?: { message?: { content?: unknown } }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
}

const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined);

/** Why `url` cannot be used, or null when it can: an http(s) URL on a host the CSP allows. */
export function endpointProblem(url: string): string | null {
  if (!url.trim()) return 'Type the endpoint’s base URL, e.g. ' + EXAMPLE_URL;
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return `Not a URL: ${url}`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'The URL must start with http:// or https://';
  if (!LOCAL_HOSTS.has(parsed.hostname)) return 'The demo’s CSP allows only local endpoints (localhost, 127.0.0.1): see docs/demo.md';
  return null;
}

/**
 * An OpenAI-compatible chat endpoint as Engram's language model: POST `<url>/chat/completions` with the prompt as
 * one user message, the answer's `choices[0].message.content` as text and its `usage` as token counts.
 */
export function openAiCompatibleModel(settings: () => EndpointSettings): LanguageModel {
  return functionModel(async (prompt, { maxTokens, signal }) => {
    const { url, model } = settings();
    const response = await fetch(`${url.trim().replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        ...(model.trim() ? { model: model.trim() } : {}),
        messages: [{ role: 'user', content: prompt }],
        ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
        temperature: 0,
        stream: false,
      }),
      ...(signal ? { signal } : {}),
    });
    if (!response.ok) throw new Error(`the endpoint answered HTTP ${response.status} ${response.statusText}`.trim());
    const body = (await response.json()) as ChatCompletion;
    const text = body.choices?.[0]?.message?.content;
    if (typeof text !== 'string') throw new Error('the endpoint answered no choices[0].message.content');
    const promptTokens = count(body.usage?.prompt_tokens);
    const completionTokens = count(body.usage?.completion_tokens);
    return { text, ...(promptTokens !== undefined ? { promptTokens } : {}), ...(completionTokens !== undefined ? { completionTokens } : {}) };
  });
}

export interface LlmPicker {
  /** The model to give `createMemory({ llm })`: it delegates to the backend picked at the time of each call. */
  model: LanguageModel;
  /** The backend picked now, and whether it can answer (an endpoint needs a valid local URL). */
  picked(): { backend: Backend; usable: boolean; label: string };
}

function loadEndpoint(): EndpointSettings {
  try {
    const saved = JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? 'null') as Partial<EndpointSettings> | null;
    return { url: typeof saved?.url === 'string' ? saved.url : '', model: typeof saved?.model === 'string' ? saved.model : '' };
  } catch {
    return { url: '', model: '' };
  }
}

/**
 * Renders the picker into `root`. The choice itself is not saved: after a reload it is 'none' again, so a page
 * never calls out on its own; the endpoint's URL and model name are kept so they need not be typed again.
 */
export function mountLlmPicker(root: HTMLElement, onChange: () => void): LlmPicker {
  const endpoint = loadEndpoint();
  const chrome: PromptApiModel = promptApiModel({ onDownloadProgress: (loaded) => say(`Downloading Chrome’s model: ${Math.round(loaded * 100)}%`) });
  const endpointModel = openAiCompatibleModel(() => endpoint);

  const select = h(
    'select',
    { id: 'llm-backend', 'aria-describedby': 'llm-status' },
    h('option', { value: 'none' }, 'none'),
    h('option', { value: 'prompt-api' }, 'Chrome’s built-in model (Prompt API)'),
    h('option', { value: 'endpoint' }, 'OpenAI-compatible endpoint (local)'),
  );
  const chromeOption = select.querySelector<HTMLOptionElement>('option[value="prompt-api"]')!;
  const urlInput = h('input', { id: 'llm-url', type: 'url', placeholder: EXAMPLE_URL, autocomplete: 'off', spellcheck: 'false', value: endpoint.url });
  const modelInput = h('input', { id: 'llm-model', type: 'text', placeholder: 'e.g. llama3.2', autocomplete: 'off', spellcheck: 'false', value: endpoint.model });
  const endpointFields = h(
    'div',
    { class: 'llm-endpoint' },
    h('div', { class: 'control' }, h('label', { for: 'llm-url' }, 'Endpoint URL'), urlInput, h('small', { class: 'help' }, 'The page POSTs to <URL>/chat/completions.')),
    h('div', { class: 'control' }, h('label', { for: 'llm-model' }, 'Model name'), modelInput, h('small', { class: 'help' }, 'Sent as "model"; Ollama needs one.')),
  );
  const status = h('small', { id: 'llm-status', class: 'help', role: 'status', 'aria-live': 'polite' });
  const chromeReason = h('small', { id: 'llm-chrome-reason', class: 'help' });
  root.append(
    h(
      'fieldset',
      { class: 'group llm-picker' },
      h('legend', {}, 'Language model'),
      h('div', { class: 'control' }, h('label', { for: 'llm-backend' }, 'Model for the LLM stages'), select, status, chromeReason),
      endpointFields,
    ),
  );

  let backend: Backend = 'none';
  const say = (text: string) => (status.textContent = text);

  const picked = (): { backend: Backend; usable: boolean; label: string } => {
    if (backend === 'prompt-api') return { backend, usable: !chromeOption.disabled, label: 'Chrome’s built-in model' };
    if (backend === 'endpoint') return { backend, usable: endpointProblem(endpoint.url) === null, label: `${endpoint.url.trim()}${endpoint.model.trim() ? ` (${endpoint.model.trim()})` : ''}` };
    return { backend, usable: false, label: 'none' };
  };

  const describe = () => {
    endpointFields.hidden = backend !== 'endpoint';
    const now = picked();
    if (backend === 'none') say('None: the language-model stages are skipped, and nothing is fetched.');
    else if (backend === 'endpoint') say(now.usable ? `Using ${now.label}.` : (endpointProblem(endpoint.url) ?? ''));
    else say(now.usable ? 'Using Chrome’s built-in model.' : 'Chrome’s built-in model is unavailable here.');
  };

  select.addEventListener('change', () => {
    backend = select.value as Backend;
    describe();
    // A click is the user gesture Chrome may want before it downloads its model: start it now, not mid-search.
    if (backend === 'prompt-api') void chrome.ready().then(describe, (error: unknown) => say(error instanceof Error ? error.message : String(error)));
    onChange();
  });
  const onEndpointInput = () => {
    endpoint.url = urlInput.value;
    endpoint.model = modelInput.value;
    localStorage.setItem(SETTINGS_KEY, JSON.stringify(endpoint));
    describe();
    onChange();
  };
  urlInput.addEventListener('change', onEndpointInput);
  modelInput.addEventListener('change', onEndpointInput);

  // Asking availability() downloads nothing; without the API, or when Chrome says 'unavailable', the choice is disabled.
  const hasPromptApi = typeof (globalThis as { LanguageModel?: unknown }).LanguageModel !== 'undefined';
  const disableChrome = (reason: string) => {
    chromeOption.disabled = true;
    chromeOption.textContent = 'Chrome’s built-in model (unavailable)';
    chromeReason.textContent = reason;
  };
  if (!hasPromptApi) disableChrome('Chrome’s built-in model: this browser has no Prompt API (LanguageModel).');
  else
    void chrome.availability().then(
      (availability) => {
        if (availability === 'unavailable') disableChrome('Chrome’s built-in model: the browser says it is unavailable on this device.');
        else chromeReason.textContent = availability === 'available' ? '' : `Chrome’s built-in model: ${availability} (picking it starts the download).`;
      },
      (error: unknown) => disableChrome(`Chrome’s built-in model: ${error instanceof Error ? error.message : String(error)}`),
    );
  describe();

  const model: LanguageModel = {
    complete(prompt, options) {
      if (backend === 'prompt-api') return chrome.complete(prompt, options);
      if (backend === 'endpoint') {
        const problem = endpointProblem(endpoint.url);
        if (problem) return Promise.reject(new EngramError(ErrorCode.MODEL_NOT_FOUND, `the demo's endpoint is not usable: ${problem}`));
        return endpointModel.complete(prompt, options);
      }
      return Promise.reject(new EngramError(ErrorCode.MODEL_NOT_FOUND, 'no language model is picked in the demo (Search options → Language model)'));
    },
  };
  return { model, picked };
}
