// Noticing a new proposal (to say so in the status bar and, if wanted, in a notification): proposals whose
// pending hunks appear after the review was loaded. A reload (server start, refresh) notices nothing.
import { HunkState } from './hunk';

export interface NewProposal {
  proposalId: string;
  taskId: string | null;
  agent: string | null;
  message: string | null;
  hunks: number;
  files: number;
}

export class ProposalTracker {
  private readonly seen = new Set<string>();
  private primed = false;

  /** Everything in `hunks` is already known (after a full reload). */
  prime(hunks: Iterable<HunkState>): void {
    for (const h of hunks) this.seen.add(h.proposalId);
    this.primed = true;
  }

  /** Proposals with pending hunks not seen before, counted over `all`; nothing before the first prime. */
  observe(all: HunkState[]): NewProposal[] {
    if (!this.primed) return [];
    const fresh = new Map<string, HunkState[]>();
    for (const h of all) {
      if (this.seen.has(h.proposalId)) continue;
      if (h.status !== 'pending') continue;
      const list = fresh.get(h.proposalId);
      if (list) list.push(h);
      else fresh.set(h.proposalId, [h]);
    }
    const out: NewProposal[] = [];
    for (const [proposalId, hs] of fresh) {
      this.seen.add(proposalId);
      out.push({
        proposalId,
        taskId: hs[0].taskId,
        agent: hs.find((h) => h.agent)?.agent ?? null,
        message: hs.find((h) => h.message)?.message ?? null,
        hunks: hs.length,
        files: new Set(hs.map((h) => h.uri)).size,
      });
    }
    return out.sort((a, b) => (a.proposalId < b.proposalId ? -1 : 1));
  }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "codex proposed 3 changes in 2 files: “Use f-strings”" (the agent's name when the server gives it). */
export function noticeText(p: NewProposal): string {
  const who = p.agent ?? `Proposal ${p.proposalId}:`;
  const verb = p.agent ? ' proposed' : '';
  const why = p.message ? ` — “${p.message.length > 80 ? p.message.slice(0, 79) + '…' : p.message}”` : '';
  return `${who}${verb} ${plural(p.hunks, 'change')} in ${plural(p.files, 'file')}${why}`;
}
