// Where and what to draw for each open hunk: its old lines and the new text as ghost text.
import { HunkState, isOpen, lastOldLine, replacementText } from './hunk';
import { splitLines } from './text';

export type DecorationKind = 'pending' | 'accepted' | 'stale';

export interface LineMark {
  /** 0-based line of the old text (whole line is decorated). */
  line: number;
  kind: DecorationKind;
  hunkId: string;
  /** Ghost text shown after the line's end; undefined: none. */
  ghost?: string;
  /** The old line is removed without a counterpart (struck through). */
  removed: boolean;
}

export interface InsertMark {
  /** Line after whose end (or before whose start, when `before`) the inserted lines are shown. */
  line: number;
  before: boolean;
  kind: DecorationKind;
  hunkId: string;
  ghost: string;
}

export interface HunkMarks { lines: LineMark[]; inserts: InsertMark[] }

const ARROW = '  ⟶  ';
const NEWLINE = ' ⏎ ';
export const MAX_GHOST = 160;

function clip(s: string): string {
  return s.length > MAX_GHOST ? s.slice(0, MAX_GHOST - 1) + '…' : s;
}

function kindOf(h: HunkState): DecorationKind {
  return h.status === 'stale' ? 'stale' : h.status === 'accepted' ? 'accepted' : 'pending';
}

/**
 * Old line i shows new line i after it ("old  ⟶  new"); surplus new lines ride on the last old line,
 * joined by ⏎; surplus old lines are struck through. A pure insertion hangs its lines on the line
 * above (or before line 0 at the top of the file). Only open hunks of kind edit/delete get marks.
 */
export function marksFor(hunks: HunkState[]): HunkMarks {
  const out: HunkMarks = { lines: [], inserts: [] };
  for (const h of hunks) {
    if (!isOpen(h) || (h.kind !== 'edit' && h.kind !== 'delete')) continue;
    const kind = kindOf(h);
    const first = h.range.start.line;
    const last = lastOldLine(h);
    const newLines = h.kind === 'delete' ? [] : splitLines(replacementText(h));
    if (last < first) {
      const ghost = clip('+ ' + newLines.join(NEWLINE));
      if (first === 0) out.inserts.push({ line: 0, before: true, kind, hunkId: h.id, ghost: ghost + '  ' });
      else out.inserts.push({ line: first - 1, before: false, kind, hunkId: h.id, ghost: '  ' + ghost });
      continue;
    }
    const oldCount = last - first + 1;
    for (let i = 0; i < oldCount; i++) {
      const line = first + i;
      const isLast = i === oldCount - 1;
      let ghost: string | undefined;
      if (h.kind === 'delete') ghost = i === 0 ? '  (file deleted)' : undefined;
      else if (i < newLines.length) {
        const rest = isLast ? newLines.slice(i) : [newLines[i]];
        ghost = ARROW + clip(rest.join(NEWLINE));
      } else if (isLast && newLines.length === 0) ghost = '  (removed)';
      out.lines.push({ line, kind, hunkId: h.id, ghost, removed: i >= newLines.length });
    }
  }
  return out;
}

/** The open hunk whose lines (or insertion point) include `line`, if any. */
export function hunkAtLine(hunks: HunkState[], line: number): HunkState | undefined {
  let best: HunkState | undefined;
  for (const h of hunks) {
    if (!isOpen(h)) continue;
    const first = h.range.start.line;
    const last = Math.max(first, lastOldLine(h));
    if (line >= first && line <= last) return h;
    // An insertion point or a hunk just above counts when the cursor sits on the line before it.
    if (!best && lastOldLine(h) < first && line === first - 1) best = h;
  }
  return best;
}
