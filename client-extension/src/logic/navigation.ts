// Next / previous open hunk across files, in (file, line) order, wrapping around.
import { HunkState, compareByPosition, isOpen } from './hunk';

export interface Cursor { uri: string; line: number }

/** Open hunks of every file in review order: files by uri, hunks by position. */
export function reviewOrder(hunks: Iterable<HunkState>): HunkState[] {
  return [...hunks].filter(isOpen).sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : compareByPosition(a, b)));
}

function before(h: HunkState, c: Cursor): boolean {
  return h.uri < c.uri || (h.uri === c.uri && h.range.start.line < c.line);
}

function after(h: HunkState, c: Cursor): boolean {
  return h.uri > c.uri || (h.uri === c.uri && h.range.start.line > c.line);
}

/** The first open hunk that starts after the cursor line (wrapping to the first); none if no open hunk. */
export function nextHunk(hunks: Iterable<HunkState>, cursor: Cursor | undefined): HunkState | undefined {
  const order = reviewOrder(hunks);
  if (!cursor) return order[0];
  return order.find((h) => after(h, cursor)) ?? order[0];
}

/** The last open hunk that starts before the cursor line (wrapping to the last). */
export function previousHunk(hunks: Iterable<HunkState>, cursor: Cursor | undefined): HunkState | undefined {
  const order = reviewOrder(hunks);
  if (!cursor) return order[order.length - 1];
  for (let i = order.length - 1; i >= 0; i--) if (before(order[i], cursor)) return order[i];
  return order[order.length - 1];
}

/** The first pending hunk in review order (what "jump to first pending" goes to). */
export function firstPending(hunks: Iterable<HunkState>): HunkState | undefined {
  return reviewOrder(hunks).find((h) => h.status === 'pending');
}

/**
 * Where to go after deciding hunks: the first pending hunk at or below where the (first) decided one
 * was, then on through the files in review order, wrapping; never one of the decided hunks.
 */
export function nextPendingAfter(hunks: Iterable<HunkState>, decidedIds: string[], at: Cursor): HunkState | undefined {
  const skip = new Set(decidedIds);
  const order = reviewOrder(hunks).filter((h) => h.status === 'pending' && !skip.has(h.id));
  const from: Cursor = { uri: at.uri, line: at.line - 1 };
  return order.find((h) => after(h, from)) ?? order[0];
}
