/**
 * docs/api.md is the reference of the public API. This test reads the exports through the entry points (so it
 * holds wherever a type's file moves) and fails, naming each gap, when an exported name, a field of an exported
 * object type, an error code or a function's `@example` is missing, or when an options table documents a name no
 * type has any more.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Package entry → its source file, as package.json's `exports` maps them after the build. */
const ENTRIES = {
  engram: 'src/index.ts',
  'engram/node': 'src/node.ts',
  'engram/advanced': 'src/advanced.ts',
  'engram/internals': 'src/internals.ts',
  'engram/langchain': 'src/adapters/langchain.ts',
  'engram/ai-sdk': 'src/adapters/ai-sdk.ts',
  'engram/react': 'src/adapters/react.ts',
  'engram/worker': 'worker/index.ts',
} as const;
type Entry = keyof typeof ENTRIES;

/** Entries whose exported functions must each carry an `@example` in their JSDoc. */
const EXAMPLE_ENTRIES: Entry[] = ['engram', 'engram/node'];

/** Nested anonymous objects are walked this deep below a type's own fields (e.g. `Hit.explain.associative.via`). */
const NESTED_DEPTH = 3;

interface Section {
  heading: string;
  level: number;
  body: string;
}

/** The doc cut at every heading; a section runs to the next heading of the same or a higher level. */
function sections(markdown: string): Section[] {
  const lines = markdown.split('\n');
  const headings: { index: number; level: number; text: string }[] = [];
  let fenced = false;
  lines.forEach((line, index) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const match = fenced ? null : /^(#{1,6})\s+(.*)$/.exec(line);
    if (match) headings.push({ index, level: match[1]!.length, text: match[2]! });
  });
  return headings.map((heading, i) => {
    const end = headings.slice(i + 1).find((next) => next.level <= heading.level)?.index ?? lines.length;
    return { heading: heading.text, level: heading.level, body: lines.slice(heading.index + 1, end).join('\n') };
  });
}

/** Names written as code: `name`, and the identifiers of `name(args)`, `a.b.c`, `{ a, b }` (inline code may wrap a line). */
function codeNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, code] of text.matchAll(/`([^`]+)`/g)) {
    for (const [word] of code!.matchAll(/[A-Za-z_$][\w$]*/g)) names.add(word);
  }
  return names;
}

/** What a heading names in backticks: types (`Hit`), entries (`engram/node`); `f(x)` names nothing. */
function headingNames(heading: string): string[] {
  return [...heading.matchAll(/`([^`(]+)`/g)].map(([, name]) => name!.trim());
}

/** The first cell of each table row that is one backticked name or path (`k`, `explain.bm25Rank`, `add(input)`). */
function tableNames(body: string): string[] {
  const names: string[] = [];
  for (const [, cell] of body.matchAll(/^\|\s*`([^`]+)`\s*\|/gm)) {
    const path = /^([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)/.exec(cell!)?.[1];
    if (path) names.push(path.split('.').at(-1)!);
  }
  return names;
}

interface Api {
  /** Exported names per entry. */
  exports: Map<Entry, Set<string>>;
  /** Exported object types (interfaces and aliases of object types) and the names of their fields, nested ones included. */
  fields: Map<string, Set<string>>;
  errorCodes: string[];
  /** Exported functions (of EXAMPLE_ENTRIES) without an `@example` tag on their declaration. */
  withoutExample: string[];
}

function readApi(): Api {
  const configPath = ts.findConfigFile(root, ts.sys.fileExists, 'tsconfig.json')!;
  const config = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, root);
  const program = ts.createProgram(
    Object.values(ENTRIES).map((file) => root + file),
    { ...config.options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const fromSource = (node: ts.Node): boolean => /\/(src|worker)\//.test(node.getSourceFile().fileName.replace(root, '/'));

  const exported = new Map<Entry, ts.Symbol[]>();
  for (const [entry, file] of Object.entries(ENTRIES) as [Entry, string][]) {
    const source = program.getSourceFile(root + file);
    if (!source) throw new Error(`cannot load ${file}`);
    const module = checker.getSymbolAtLocation(source);
    exported.set(entry, module ? checker.getExportsOfModule(module) : []);
  }
  const resolve = (symbol: ts.Symbol): ts.Symbol => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);

  /**
   * An object literal type written in Engram's source (`explain: { … }`, `weights: { … }`): documented with the
   * field that holds it. Named types (`DecayOptions`, `Partial<RecordLimits>`) have sections of their own.
   */
  const anonymous = (type: ts.Type): boolean =>
    !type.aliasSymbol && type.symbol?.name === ts.InternalSymbolName.Type && (type.symbol.declarations ?? []).some(fromSource);

  /** Field names of an object type, walking the anonymous objects nested in it. */
  const collect = (type: ts.Type, names: Set<string>, depth: number, seen: Set<ts.Type>): void => {
    if (seen.has(type)) return;
    seen.add(type);
    if (type.isUnion() || type.isIntersection()) {
      for (const part of type.types) collect(part, names, depth, seen);
      return;
    }
    if (!(type.flags & ts.TypeFlags.Object) || type.getCallSignatures().length > 0) return;
    if (checker.isArrayType(type)) {
      const [element] = checker.getTypeArguments(type as ts.TypeReference);
      if (element) collect(element, names, depth, seen);
      return;
    }
    if (depth > 0 && !anonymous(type)) return;
    for (const property of checker.getPropertiesOfType(type)) {
      const declaration = property.declarations?.[0];
      if (!declaration || !fromSource(declaration)) continue;
      names.add(property.name);
      if (depth >= NESTED_DEPTH) continue;
      collect(checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(property, declaration)), names, depth + 1, seen);
    }
  };

  const fields = new Map<string, Set<string>>();
  const withoutExample: string[] = [];
  let errorCodes: string[] = [];
  for (const [entry, symbols] of exported) {
    for (const symbol of symbols) {
      const target = resolve(symbol);
      const declaration = target.declarations?.[0];
      if (!declaration || !fromSource(declaration)) continue;
      if (target.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias) && !fields.has(symbol.name)) {
        const names = new Set<string>();
        collect(checker.getDeclaredTypeOfSymbol(target), names, 0, new Set());
        if (names.size > 0) fields.set(symbol.name, names);
      }
      if (symbol.name === 'ErrorCode' && target.flags & ts.SymbolFlags.Variable) {
        errorCodes = checker.getPropertiesOfType(checker.getTypeOfSymbolAtLocation(target, declaration)).map((code) => code.name);
      }
      if (EXAMPLE_ENTRIES.includes(entry) && target.flags & ts.SymbolFlags.Function) {
        const hasExample = (target.declarations ?? []).some((d) => ts.getJSDocTags(d).some((tag) => tag.tagName.text === 'example'));
        if (!hasExample && !withoutExample.includes(symbol.name)) withoutExample.push(symbol.name);
      }
    }
  }
  const exports = new Map([...exported].map(([entry, symbols]) => [entry, new Set(symbols.map((s) => s.name))]));
  return { exports, fields, errorCodes, withoutExample };
}

const doc = readFileSync(root + 'docs/api.md', 'utf8');
const docSections = sections(doc);
/** The section whose heading names `name` in backticks (the innermost when several do). */
const sectionOf = (name: string): Section | undefined =>
  docSections.filter((section) => headingNames(section.heading).includes(name)).sort((a, b) => b.level - a.level)[0];

describe('docs/api.md documents the public API', () => {
  let api: Api;
  beforeAll(() => {
    api = readApi();
  }, 120_000);

  it('reads the API through the entry points', () => {
    expect(api.exports.get('engram')).toContain('createMemory');
    expect(api.fields.get('SearchOptions')).toContain('neighbours');
    expect(api.fields.get('Hit')).toContain('associative');
    expect(api.errorCodes).toContain('INVALID_INPUT');
  });

  it("names every export in its entry's section", () => {
    const missing: string[] = [];
    for (const [entry, names] of api.exports) {
      const section = sectionOf(entry);
      if (!section) {
        missing.push(`no section headed \`${entry}\``);
        continue;
      }
      const shown = codeNames(section.body);
      // `engram` is `createMemory` plus everything of `engram/node`, whose section lists those.
      const own = entry === 'engram' ? [...names].filter((name) => !api.exports.get('engram/node')!.has(name)) : [...names];
      for (const name of own) if (!shown.has(name)) missing.push(`${entry}: \`${name}\``);
    }
    expect(missing, `exports not named in their entry's section of docs/api.md:\n${missing.join('\n')}`).toEqual([]);
  });

  it('documents every field of every exported object type in its section', () => {
    const missing: string[] = [];
    for (const [type, names] of api.fields) {
      const section = sectionOf(type);
      if (!section) {
        missing.push(`${type}: no heading naming \`${type}\` (fields ${[...names].join(', ')})`);
        continue;
      }
      const shown = codeNames(section.body);
      for (const name of names) if (!shown.has(name)) missing.push(`${type}.${name} (section "${section.heading}")`);
    }
    expect(missing, `fields missing from docs/api.md:\n${missing.join('\n')}`).toEqual([]);
  });

  it('documents every error code', () => {
    const section = sectionOf('ErrorCode');
    const shown = section ? codeNames(section.body) : new Set<string>();
    const missing = api.errorCodes.filter((code) => !shown.has(code));
    expect(missing, `error codes missing from the ErrorCode section of docs/api.md: ${missing.join(', ')}`).toEqual([]);
  });

  it('documents no option, field or method that its types no longer have (tables)', () => {
    const stale: string[] = [];
    for (const section of docSections) {
      const types = headingNames(section.heading).filter((name) => api.fields.has(name));
      if (types.length === 0) continue;
      const known = new Set(types.flatMap((type) => [...api.fields.get(type)!]));
      // Only the rows of this section's own tables: a sub-section names its own types.
      const own = section.body.split(/^#{1,6}\s/m)[0]!;
      for (const name of tableNames(own)) if (!known.has(name)) stale.push(`"${section.heading}": \`${name}\``);
    }
    expect(stale, `docs/api.md documents names its types do not have:\n${stale.join('\n')}`).toEqual([]);
  });

  it('gives every exported function of engram and engram/node an @example', () => {
    expect(api.withoutExample, `exported functions without an @example in their JSDoc: ${api.withoutExample.join(', ')}`).toEqual([]);
  });
});
