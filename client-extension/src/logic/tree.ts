// Grouping hunks for the Stet view: tasks -> proposals -> files -> hunks, with counts.
import { Counts, HunkState, Turn, compareByPosition, countByStatus, isMissing, isOpen } from './hunk';
import { isTurn } from './turns';

/** `missing`: applied hunks whose text is no longer in the file (they count as applied in `counts`). */
export interface FileGroup { uri: string; hunks: HunkState[]; counts: Counts; missing: number }
/** `turn`: the agent's turn that made the proposal (captured from Claude Code's hooks), when known. */
export interface ProposalGroup { proposalId: string; message: string | null; turn: Turn | null; files: FileGroup[]; counts: Counts; missing: number }
export interface TaskGroup { taskId: string | null; proposals: ProposalGroup[]; counts: Counts; missing: number }

const missingIn = (hunks: HunkState[]) => hunks.filter(isMissing).length;

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = m.get(k);
    if (list) list.push(it);
    else m.set(k, [it]);
  }
  return m;
}

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Tasks sorted by id (hunks without a task last), proposals and files by id/uri, hunks by position. */
export function groupHunks(hunks: HunkState[]): TaskGroup[] {
  const NO_TASK = '\u0000none';
  const tasks = groupBy(hunks, (h) => h.taskId ?? NO_TASK);
  const taskKeys = [...tasks.keys()].sort((a, b) => (a === NO_TASK ? 1 : b === NO_TASK ? -1 : byKey(a, b)));
  return taskKeys.map((tk) => {
    const taskHunks = tasks.get(tk)!;
    const proposals = groupBy(taskHunks, (h) => h.proposalId);
    return {
      taskId: tk === NO_TASK ? null : tk,
      counts: countByStatus(taskHunks),
      missing: missingIn(taskHunks),
      proposals: [...proposals.keys()].sort(byKey).map((pid) => {
        const propHunks = proposals.get(pid)!;
        const files = groupBy(propHunks, (h) => h.uri);
        return {
          proposalId: pid,
          message: propHunks.find((h) => h.message)?.message ?? null,
          turn: propHunks.map((h) => h.turn).find(isTurn) ?? null,
          counts: countByStatus(propHunks),
          missing: missingIn(propHunks),
          files: [...files.keys()].sort(byKey).map((uri) => {
            const fileHunks = files.get(uri)!.slice().sort(compareByPosition);
            return { uri, hunks: fileHunks, counts: countByStatus(fileHunks), missing: missingIn(fileHunks) };
          }),
        };
      }),
    };
  });
}

/**
 * "2 pending · 1 accepted · 1 not in file · 3 decided": the open statuses, applied hunks whose text is gone
 * (they need a look), then the other decided ones summed.
 */
export function countsLabel(c: Counts, missing = 0): string {
  const parts: string[] = [];
  if (c.pending) parts.push(`${c.pending} pending`);
  if (c.accepted) parts.push(`${c.accepted} accepted`);
  if (c.stale) parts.push(`${c.stale} stale`);
  if (missing) parts.push(`${missing} not in file`);
  const decided = c.applied - missing + c.rejected + c.superseded;
  if (decided) parts.push(`${decided} decided`);
  return parts.join(' · ');
}

/**
 * The tree item's contextValue, which the menus in package.json match: `hunk.<status>`, or `hunk.missing`
 * for an applied hunk no longer in the file; groups say whether they hold pending hunks (bulk buttons).
 */
export function hunkContext(h: HunkState): string {
  return isMissing(h) ? 'hunk.missing' : `hunk.${h.status}`;
}

export function groupContext(kind: 'task' | 'proposal' | 'file', hunks: HunkState[]): string {
  return hunks.some((h) => h.status === 'pending') ? `${kind}.pending` : kind;
}

/**
 * The description of a hunk row: its status (or "applied · not in file"), who decided when a commit did
 * ("accepted by commit abc1234"), whether its rejection was sent back to the agent, and the developer's feedback.
 */
export function hunkDescription(h: HunkState): string {
  const status = isMissing(h) ? 'applied · not in the file any more' : h.status;
  const shown = [status, decidedByLabel(h), sentBackLabel(h)].filter((s) => s).join(' · ');
  return h.feedback ? `${shown} — “${h.feedback}”` : shown;
}

/** "sent back to the agent" for a rejection request changes sent back to the agent, else "". */
export function sentBackLabel(h: Pick<HunkState, 'sentBack' | 'status'>): string {
  return h.sentBack === true && h.status === 'rejected' ? 'sent back to the agent' : '';
}

/** "accepted by commit abc1234" for a hunk a commit decided (its id shortened, hex only), else "". */
export function decidedByLabel(h: Pick<HunkState, 'decidedBy' | 'commit' | 'status'>): string {
  if (h.decidedBy !== 'commit' || typeof h.commit !== 'string' || !/^[0-9a-f]{7,64}$/.test(h.commit)) return '';
  if (h.status !== 'accepted' && h.status !== 'applied') return '';
  return `accepted by commit ${h.commit.slice(0, 7)}`;
}

/** Codicon id for a hunk status (the view maps it to a ThemeIcon). */
export function statusIcon(h: HunkState): string {
  if (isMissing(h)) return 'warning';
  switch (h.status) {
    case 'pending': return 'circle-large-outline';
    case 'accepted': return 'pass';
    case 'applied': return 'pass-filled';
    case 'rejected': return 'close';
    case 'stale': return 'warning';
    case 'superseded': return 'history';
  }
}

/** Whether a tree node with these counts starts expanded: yes while something is open in it. */
export function hasOpen(hunks: HunkState[]): boolean {
  return hunks.some(isOpen);
}

/** The last path segments of a file uri, relative to the first root that contains it. */
export function relativePath(uri: string, roots: string[]): string {
  for (const root of roots) {
    const r = root.endsWith('/') ? root : root + '/';
    if (uri.startsWith(r)) return decodeURIComponent(uri.slice(r.length));
  }
  return decodeURIComponent(uri.replace(/^file:\/\//, ''));
}

/** A proposal row's label: "Turn 3: message" for a captured turn, else "id: message". */
export function proposalLabel(g: Pick<ProposalGroup, 'proposalId' | 'message' | 'turn'>): string {
  const name = g.turn ? `Turn ${g.turn.number}` : g.proposalId;
  return g.message ? `${name}: ${g.message}` : name;
}
