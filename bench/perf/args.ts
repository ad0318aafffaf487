/** Command-line options shared by every section: `--sizes 1000,10000 --dims 384 --rounds 5 --budget 10000`. */
export interface BenchArgs {
  sizes: number[];
  /** 384 = synthetic MiniLM/BGE-class vectors; 100 = the built-in model's vectors. */
  dims: number[];
  rounds: number;
  /** Per system and size: stop adding measured rounds after this many ms. */
  budgetMs: number;
  sections: string[];
  /** Largest size for end-to-end ingest with the real built-in model (it embeds every text). */
  modelIngestMax: number;
  /** Memories of the one-million scale (`--million` = 1,000,000; `--million-n 200000` to try the path smaller); 0 = not run. */
  millionN: number;
  /** Also build and time MiniSearch at that scale, in its own Node process (slow: minutes). */
  millionPeers: boolean;
  /** Leave out the browser worker at that scale (`--million-node-only`): Engram in Node only. */
  millionNodeOnly: boolean;
}

export const SECTIONS = ['node', 'writes', 'long', 'ivf', 'browser', 'embedder', 'worker', 'million', 'sync'];
/** The one-million scale and sync through a local S3 server are slow: they run only when asked for. */
export const DEFAULT_SECTIONS = SECTIONS.filter((s) => s !== 'million' && s !== 'sync');
export const MILLION = 1_000_000;

export function parseArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = {
    sizes: [1_000, 10_000, 100_000],
    dims: [384, 100],
    rounds: 10,
    budgetMs: 20_000,
    sections: DEFAULT_SECTIONS,
    modelIngestMax: 10_000,
    millionN: 0,
    millionPeers: false,
    millionNodeOnly: false,
  };
  const list = (value: string | undefined) => (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const numbers = (flag: string, value: string | undefined) => {
    const out = list(value).map(Number);
    if (out.length === 0 || out.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error(`bench: ${flag} wants positive integers, got "${value}"`);
    return out;
  };
  let sectionsGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    // Switches without a value.
    if (flag === '--million') {
      args.millionN = MILLION;
      continue;
    }
    if (flag === '--million-peers') {
      args.millionPeers = true;
      continue;
    }
    if (flag === '--million-node-only') {
      args.millionNodeOnly = true;
      continue;
    }
    const value = flag.includes('=') ? flag.slice(flag.indexOf('=') + 1) : argv[++i];
    const name = flag.replace(/=.*/, '');
    if (name === '--sizes') args.sizes = numbers(name, value).sort((a, b) => a - b);
    else if (name === '--dims') args.dims = numbers(name, value);
    else if (name === '--rounds') args.rounds = numbers(name, value)[0]!;
    else if (name === '--budget') args.budgetMs = numbers(name, value)[0]!;
    else if (name === '--model-ingest-max') args.modelIngestMax = numbers(name, value)[0]!;
    else if (name === '--million-n') args.millionN = numbers(name, value)[0]!;
    else if (name === '--sections') {
      sectionsGiven = true;
      args.sections = list(value);
      const unknown = args.sections.filter((s) => !SECTIONS.includes(s));
      if (unknown.length > 0) throw new Error(`bench: unknown section(s) ${unknown.join(', ')}; known: ${SECTIONS.join(', ')}`);
    } else throw new Error(`bench: unknown option ${flag}`);
  }
  if (args.millionN > 0 && !sectionsGiven) args.sections = [...DEFAULT_SECTIONS, 'million'];
  if (args.sections.includes('million') && args.millionN === 0) args.millionN = MILLION;
  return args;
}

export function toArgv(args: BenchArgs): string[] {
  return [
    `--sizes=${args.sizes.join(',')}`,
    `--dims=${args.dims.join(',')}`,
    `--rounds=${args.rounds}`,
    `--budget=${args.budgetMs}`,
    `--sections=${args.sections.join(',')}`,
    `--model-ingest-max=${args.modelIngestMax}`,
    ...(args.millionN > 0 ? [`--million-n=${args.millionN}`] : []),
    ...(args.millionPeers ? ['--million-peers'] : []),
    ...(args.millionNodeOnly ? ['--million-node-only'] : []),
  ];
}
