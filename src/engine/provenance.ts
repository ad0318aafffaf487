/** The graph methods of the engine: associations learnt from use (`related`) and the app's provenance links. */
import { invalidInput } from '../errors.js';
import type { Association, Link, LinkKind, Why, WhyOptions } from '../types.js';
import { checkId } from '../util/ids.js';
import type { AssociationGraph } from './associations.js';
import { cloneRecord } from './copy.js';
import { checkConfidence, checkLinkKind, checkWhyOptions, type LinkGraph } from './links.js';
import type { RecordTable } from './record-table.js';
import type { WriteQueue } from './write-queue.js';

export class Provenance {
  constructor(
    private readonly records: RecordTable,
    private readonly queue: WriteQueue,
    private readonly links: LinkGraph,
    private readonly associations: AssociationGraph,
    private readonly clock: () => number,
  ) {}

  async related(id: string): Promise<Association[]> {
    await this.records.mustGet(id);
    return this.associations.related(id, this.clock());
  }

  link(from: string, to: string, kind: LinkKind, options: { confidence?: number } = {}): Promise<Link> {
    return this.queue.run(async () => {
      checkLinkKind(kind);
      if (typeof options !== 'object' || options === null) throw invalidInput('link options must be an object { confidence? }');
      const confidence = checkConfidence(options.confidence);
      await this.records.mustGet(from);
      await this.records.mustGet(to);
      if (from === to) throw invalidInput('a memory cannot be linked to itself');
      const link: Link = { from, to, kind, confidence, createdAt: this.clock() };
      await this.queue.commit({ links: { put: [link] } }, () => this.links.set(link));
      return { ...link };
    });
  }

  unlink(from: string, to: string, kind?: LinkKind): Promise<number> {
    return this.queue.run(async () => {
      checkId(from, 'unlink: from');
      checkId(to, 'unlink: to');
      if (kind !== undefined) checkLinkKind(kind);
      const gone = this.links.between(from, to, kind);
      if (gone.length === 0) return 0;
      await this.queue.commit({ links: { remove: gone } }, () => gone.forEach((link) => this.links.delete(link)));
      return gone.length;
    });
  }

  async why(id: string, options: WhyOptions = {}): Promise<Why> {
    const { depth, direction } = checkWhyOptions(options);
    const root = await this.records.mustGet(id);
    const walked = this.links.walk(id, depth, direction);
    const memories = await this.records.getMany(walked.reached);
    const byId = new Map(memories.map((record) => [record.id, record]));
    return {
      root: cloneRecord(root),
      edges: walked.edges,
      memories: walked.reached.flatMap((other) => (byId.has(other) ? [cloneRecord(byId.get(other)!)] : [])),
      truncated: walked.truncated,
    };
  }
}
