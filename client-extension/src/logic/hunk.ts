// The protocol's HunkState and the few facts about statuses every view needs.

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }

export type HunkStatus = 'pending' | 'accepted' | 'applied' | 'rejected' | 'stale' | 'superseded';
export type HunkKind = 'edit' | 'create' | 'rename' | 'delete';

export interface HunkState {
  id: string;
  proposalId: string;
  taskId: string | null;
  uri: string;
  kind: HunkKind;
  status: HunkStatus;
  range: Range;
  oldText: string;
  newText: string;
  newUri: string | null;
  /** The developer's own replacement (accept with changes); newText stays the agent's. Optional. */
  appliedText?: string;
  /**
   * For an `applied` hunk: whether its new text is in the document now (false: someone removed it since);
   * null for every other status. Older servers do not send it: missing counts as null.
   */
  inFile?: boolean | null;
  /** Captured with its new text left in the file (`--keep`, Claude Code's hooks): the file shows the new text while pending. */
  kept?: boolean;
  /** The agent that proposed it, as `stet integrate` names it (claude-code, codex, ...), when the server knows. Optional. */
  agent?: string | null;
  message: string | null;
  feedback: string | null;
  /** A hunk decided in parts (superseded): the ids of its part and of what was left of it. Optional. */
  parts?: string[] | null;
  /** The agent's turn that made it (hunks captured from Claude Code's hooks). Optional. */
  turn?: Turn | null;
  version: number;
  decidedAt: string | null;
  /** Who decided, when not the developer: "commit" (a kept hunk whose text the developer committed). Optional. */
  decidedBy?: 'commit';
  /** With decidedBy "commit": the commit's id. Optional. */
  commit?: string;
  /** A rejection request changes sent back to the agent (its feedback, to go on working); present only then. */
  sentBack?: boolean;
}

/** A turn of an agent's session: the captures made while it answered one prompt. */
export interface Turn { session: string; number: number }

export const STATUSES: HunkStatus[] = ['pending', 'accepted', 'applied', 'rejected', 'stale', 'superseded'];

/** Open hunks are the ones the developer still has to look at (shown inline). */
export function isOpen(h: HunkState): boolean {
  return h.status === 'pending' || h.status === 'accepted' || h.status === 'stale';
}

/** An applied hunk whose text is no longer in the file: accepted, then removed by someone (git, an undo, a tool). */
export function isMissing(h: HunkState): boolean {
  return h.status === 'applied' && inFileOf(h) === false;
}

/** The hunk's inFile, with a missing field (older servers) read as null. */
export function inFileOf(h: HunkState): boolean | null {
  return typeof h.inFile === 'boolean' ? h.inFile : null;
}

/** Does the file show the hunk's new lines (the agent left them there: a kept capture, still in the file)? */
export function newTextInFile(h: HunkState): boolean {
  return h.kept === true && h.inFile !== false;
}

/** Shown in the editor: open hunks, and applied ones that are no longer in the file. */
export function isShown(h: HunkState): boolean {
  return isOpen(h) || isMissing(h);
}

export type Counts = Record<HunkStatus, number>;

export function countByStatus(hunks: Iterable<HunkState>): Counts {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Counts;
  for (const h of hunks) counts[h.status] = (counts[h.status] ?? 0) + 1;
  return counts;
}

/** Document order: by line, then column; an insertion sorts before a replacement on the same line. */
export function compareByPosition(a: HunkState, b: HunkState): number {
  return (
    a.range.start.line - b.range.start.line ||
    a.range.start.character - b.range.start.character ||
    a.range.end.line - b.range.end.line ||
    a.id.localeCompare(b.id)
  );
}

/** The text this hunk puts in the file: the developer's, when they accepted with changes. */
export function replacementText(h: HunkState): string {
  return typeof h.appliedText === 'string' ? h.appliedText : h.newText;
}

/** Human line span, 1-based, of the hunk's old text ("line 3", "lines 3–5", "before line 7"). */
export function lineLabel(h: HunkState): string {
  if (h.kind === 'create') return 'new file';
  if (h.kind === 'rename') return h.newUri ? `rename to ${decodeURIComponent(h.newUri.split('/').pop() ?? '')}` : 'rename';
  if (h.kind === 'delete') return 'delete file';
  const first = h.range.start.line;
  const last = lastOldLine(h);
  if (last < first) return `insert before line ${first + 1}`;
  return first === last ? `line ${first + 1}` : `lines ${first + 1}–${last + 1}`;
}

/** 0-based index of the last line the old text covers; < start line for a pure insertion. */
export function lastOldLine(h: HunkState): number {
  const { start, end } = h.range;
  if (end.line === start.line && end.character === start.character) return start.line - 1;
  return end.character === 0 ? end.line - 1 : end.line;
}
