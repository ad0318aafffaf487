// engram/react: useMemory opens the database for the tree, useSearch answers as the user types.
// Plain createElement, so the example needs no JSX plugin; with JSX it reads the same.
import { createElement as h, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useMemory, useSearch } from 'engram/react';

function App() {
  const { memory, status, error } = useMemory({ name: 'react-notes' });
  const [query, setQuery] = useState('');
  const [count, setCount] = useState(0);
  const { result, loading } = useSearch(memory, query, { search: { k: 3 } });

  async function add(event) {
    event.preventDefault();
    const input = event.currentTarget.elements.text;
    await memory.add({ text: input.value });
    input.value = '';
    setCount((n) => n + 1);
  }

  return h(
    'main',
    { 'data-status': status },
    h('p', { id: 'status' }, error ? `error: ${error.code}` : `${status}, ${count} added`),
    h('form', { id: 'add', onSubmit: add }, h('input', { name: 'text', placeholder: 'Remember…' }), h('button', { disabled: !memory }, 'Add')),
    h('input', { id: 'query', value: query, placeholder: 'Search…', onChange: (event) => setQuery(event.target.value) }),
    h('p', { id: 'searching' }, loading ? 'searching…' : result ? `${result.trace.mode}: ${result.hits.length} hits` : ''),
    h('ol', { id: 'hits' }, (result?.hits ?? []).map((hit) => h('li', { key: hit.id }, hit.text))),
  );
}

createRoot(document.getElementById('root')).render(h(App));
