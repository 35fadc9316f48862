// Deciding many hunks at once (a file, a proposal, a task, everything): exactly the pending hunks the
// developer was shown, by id and version, so a hunk that arrives or changes meanwhile is never decided unseen.
import { HunkState } from './hunk';
import { Scope, inScope } from './review';
import { turnLabel } from './turns';

export type Verdict = 'accept' | 'reject';

export interface BulkPlan {
  hunks: HunkState[];
  files: number;
  /** The stet.accept / stet.reject params (feedback added by the caller). */
  params: { hunkIds: string[]; expectedVersions: Record<string, number> };
}

/** The pending hunks of a scope, optionally narrowed further (a file node under one proposal). */
export function bulkPlan(hunks: HunkState[], scope: Scope, also: (h: HunkState) => boolean = () => true): BulkPlan {
  const chosen = hunks.filter((h) => h.status === 'pending' && inScope(h, scope) && also(h));
  return {
    hunks: chosen,
    files: new Set(chosen.map((h) => h.uri)).size,
    params: {
      hunkIds: chosen.map((h) => h.id),
      expectedVersions: Object.fromEntries(chosen.map((h) => [h.id, h.version])),
    },
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "Accept 14 pending hunks in 3 files (task t1)?" */
export function bulkQuestion(verdict: Verdict, plan: BulkPlan, what: string): string {
  const verb = verdict === 'accept' ? 'Accept' : 'Reject';
  return `${verb} ${plural(plan.hunks.length, 'pending hunk')} in ${plural(plan.files, 'file')} (${what})?`;
}

/** "Accepted 14 hunks in 3 files." */
export function bulkDone(verdict: Verdict, plan: BulkPlan): string {
  const verb = verdict === 'accept' ? 'Accepted' : 'Rejected';
  return `${verb} ${plural(plan.hunks.length, 'hunk')} in ${plural(plan.files, 'file')}.`;
}

/** Ask before deciding more than `threshold` hunks at once (a negative threshold never asks). */
export function needsConfirmation(count: number, threshold: unknown): boolean {
  const t = typeof threshold === 'number' && Number.isFinite(threshold) ? threshold : 5;
  return t >= 0 && count > t;
}

/** What a scope is called in questions and messages. */
export function scopeLabel(scope: Scope, fileLabel?: string): string {
  switch (scope.kind) {
    case 'all': return 'everything pending';
    case 'proposal': return `proposal ${scope.proposalId}`;
    case 'task': return `task ${scope.taskId}`;
    case 'file': return fileLabel ?? scope.uri.split('/').pop() ?? scope.uri;
    case 'turn': return turnLabel(scope);
  }
}
