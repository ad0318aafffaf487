/** A tiny hyperscript helper: the demo needs no UI framework. */
type Child = Node | string | number | null | undefined | false;
type Props = {
  class?: string;
  dataset?: Record<string, string>;
  /** Inline styles as CSS properties (`{ width: '40%' }`), set through the CSSOM: the CSP refuses `style` attributes. */
  style?: Record<string, string>;
  on?: Partial<{ [E in keyof HTMLElementEventMap]: (event: HTMLElementEventMap[E]) => void }>;
  [attribute: string]: unknown;
};

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') element.className = String(value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (name === 'style') {
      for (const [property, css] of Object.entries(value as Record<string, string>)) element.style.setProperty(property, css);
    } else if (name === 'on') {
      for (const [type, listener] of Object.entries(value as Record<string, EventListener>)) element.addEventListener(type, listener);
    } else if (name in element && typeof value !== 'string') (element as unknown as Record<string, unknown>)[name] = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  element.append(...children.filter((c): c is Node | string | number => c !== null && c !== undefined && c !== false).map((c) => (typeof c === 'number' ? String(c) : c)));
  return element;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`demo: #${id} is missing from index.html`);
  return element as T;
}

export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number): (...args: A) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

const DATE = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });

export function formatDate(ms: number): string {
  return DATE.format(ms);
}

/** "3 days ago", "5 months ago": ages are what decay acts on. */
export function formatAge(ms: number, now: number): string {
  const days = (now - ms) / 86_400_000;
  if (days < 0) return 'in the future';
  if (days < 1) return 'today';
  if (days < 2) return 'yesterday';
  if (days < 45) return `${Math.round(days)} days ago`;
  if (days < 540) return `${Math.round(days / 30.44)} months ago`;
  return `${(days / 365.25).toFixed(1)} years ago`;
}
