// The review surface: which hunks a review shows (one file, a proposal, a task, or everything pending),
// the text of each file with those hunks applied, and where each hunk lands in that text (for the Accept /
// Reject lenses inside the diff and for the keys there).
import { HunkState, Position, compareByPosition, lastOldLine, replacementText } from './hunk';
import { lineStarts, matchesOldText, offsetAt, splitLines } from './text';
import { inTurn, shortSession } from './turns';

export type Scope =
  | { kind: 'all' }
  | { kind: 'proposal'; proposalId: string }
  | { kind: 'task'; taskId: string }
  | { kind: 'file'; uri: string }
  | { kind: 'turn'; session: string; number: number };

export function inScope(h: HunkState, scope: Scope): boolean {
  switch (scope.kind) {
    case 'all': return true;
    case 'proposal': return h.proposalId === scope.proposalId;
    case 'task': return h.taskId === scope.taskId;
    case 'file': return h.uri === scope.uri;
    case 'turn': return inTurn(h, scope);
  }
}

/** Compact text form of a scope (it travels in virtual document uris). */
export function scopeKey(scope: Scope): string {
  switch (scope.kind) {
    case 'all': return 'all';
    case 'proposal': return `proposal:${scope.proposalId}`;
    case 'task': return `task:${scope.taskId}`;
    case 'file': return `file:${scope.uri}`;
    case 'turn': return `turn:${scope.number}:${scope.session}`;
  }
}

export function parseScopeKey(key: string): Scope | undefined {
  if (key === 'all') return { kind: 'all' };
  const i = key.indexOf(':');
  if (i < 0) return undefined;
  const kind = key.slice(0, i);
  const value = key.slice(i + 1);
  if (kind === 'proposal') return { kind, proposalId: value };
  if (kind === 'task') return { kind, taskId: value };
  if (kind === 'file') return { kind, uri: value };
  if (kind === 'turn') {
    const j = value.indexOf(':');
    const number = Number(value.slice(0, j));
    return j > 0 && Number.isInteger(number) ? { kind, number, session: value.slice(j + 1) } : undefined;
  }
  return undefined;
}

/** The editor title of a review. */
export function scopeTitle(scope: Scope, fileLabel?: string): string {
  switch (scope.kind) {
    case 'all': return 'Stet: all pending changes';
    case 'proposal': return `Stet: proposal ${scope.proposalId}`;
    case 'task': return `Stet: task ${scope.taskId}`;
    case 'file': return `Stet: ${fileLabel ?? scope.uri.split('/').pop() ?? scope.uri}`;
    case 'turn': return `Stet: turn ${scope.number} (session ${shortSession(scope.session)})`;
  }
}

/** Hunks the proposal side shows: pending or accepted (not yet in the file), in scope. */
export function reviewHunks(hunks: HunkState[], scope: Scope): HunkState[] {
  return hunks.filter((h) => (h.status === 'pending' || h.status === 'accepted') && inScope(h, scope));
}

/** The files a review lists, in review order (by uri). */
export function reviewFiles(hunks: HunkState[], scope: Scope): string[] {
  return [...new Set(reviewHunks(hunks, scope).map((h) => h.uri))].sort();
}

/** Where a hunk's new text sits in the proposal text: `lines` lines from `line` (0 for a removal). */
export interface Span { hunkId: string; line: number; lines: number }

export interface Layout {
  /** The file's text with the hunks applied. */
  text: string;
  spans: Span[];
  /** Hunks left out because the text under them changed (they cannot apply cleanly). */
  skipped: string[];
}

/** The text the base side shows: empty for a file an open hunk creates (it does not exist yet). */
export function baseText(fileText: string | undefined, hunks: HunkState[]): string {
  if (hunks.some((h) => h.kind === 'create')) return '';
  return fileText ?? '';
}

const newlines = (t: string) => (t.match(/\r\n|\r|\n/g) ?? []).length;

/** Where a text ends when it starts at `start`. */
function endOf(start: Position, text: string): Position {
  const n = newlines(text);
  const tail = text.slice(Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r')) + 1);
  return n ? { line: start.line + n, character: tail.length } : { line: start.line, character: start.character + text.length };
}

/**
 * The current side of a review when some of its hunks are kept captures (the agent left their new text in
 * the file, where their range is): that text with those hunks' old text put back, and every hunk with its
 * range in it — so the review shows a kept hunk as the change it is, like any other.
 */
export function unkeep(text: string, hunks: HunkState[]): { text: string; hunks: HunkState[] } {
  const starts = lineStarts(text);
  let out = '';
  let at = 0;
  let delta = 0;
  const moved: HunkState[] = [];
  for (const h of hunks.slice().sort(compareByPosition)) {
    const from = offsetAt(text, starts, h.range.start);
    const to = offsetAt(text, starts, h.range.end);
    const start = { line: h.range.start.line + delta, character: h.range.start.character };
    const kept = h.kind === 'edit' && h.kept === true && h.inFile !== false && from >= at && text.slice(from, to) === h.newText;
    if (!kept) {
      moved.push(delta ? { ...h, range: { start, end: { line: h.range.end.line + delta, character: h.range.end.character } } } : h);
      continue;
    }
    out += text.slice(at, from) + h.oldText;
    at = to;
    moved.push({ ...h, range: { start, end: endOf(start, h.oldText) } });
    delta += newlines(h.oldText) - newlines(h.newText);
  }
  return { text: out + text.slice(at), hunks: moved };
}

/**
 * The base text with the hunks applied, top to bottom, and each hunk's place in the result. File
 * operations: a creation is the whole new text, a deletion empties the file, a rename keeps the text;
 * each sits at line 0.
 */
export function layoutProposal(base: string, hunks: HunkState[]): Layout {
  const spans: Span[] = [];
  const skipped: string[] = [];
  const ops = hunks.filter((h) => h.kind !== 'edit');
  const create = ops.find((h) => h.kind === 'create');
  if (create) {
    const text = replacementText(create);
    return { text, spans: ops.map((h) => ({ hunkId: h.id, line: 0, lines: h === create ? splitLines(text).length : 0 })), skipped };
  }
  if (ops.some((h) => h.kind === 'delete')) {
    return { text: '', spans: ops.map((h) => ({ hunkId: h.id, line: 0, lines: 0 })), skipped };
  }
  for (const h of ops) spans.push({ hunkId: h.id, line: 0, lines: 0 });
  const starts = lineStarts(base);
  let out = '';
  let at = 0; // offset in base up to which `out` holds it
  let delta = 0; // lines added (removed) above the current point
  for (const h of hunks.filter((x) => x.kind === 'edit').sort(compareByPosition)) {
    const from = offsetAt(base, starts, h.range.start);
    const to = offsetAt(base, starts, h.range.end);
    if (from < at || !matchesOldText(base, h)) {
      skipped.push(h.id);
      continue;
    }
    const newText = replacementText(h);
    const newLines = splitLines(newText).length;
    const oldLines = Math.max(0, lastOldLine(h) - h.range.start.line + 1);
    spans.push({ hunkId: h.id, line: h.range.start.line + delta, lines: newLines });
    out += base.slice(at, from) + newText;
    at = to;
    delta += newLines - oldLines;
  }
  out += base.slice(at);
  return { text: out, spans, skipped };
}

/** The hunk whose new lines include `line` of the proposal text (or that removed lines just there). */
export function spanAtLine(spans: Span[], line: number): Span | undefined {
  return spans.find((s) => line >= s.line && line < s.line + Math.max(1, s.lines));
}

/**
 * The line of a proposal side where the file's Accept file / Reject file pair goes: the line of its first
 * pending hunk. The review folds unchanged lines away, so line 0 is often not on screen, while a hunk's
 * line always is (its new lines, or the line right after lines it removes). A rename changes no line
 * (it sits on line 0): it counts only when nothing else is pending. undefined: nothing is pending.
 */
export function fileLensLine(placed: { hunk: Pick<HunkState, 'kind' | 'status'>; line: number }[]): number | undefined {
  const pending = placed.filter((p) => p.hunk.status === 'pending');
  const changing = pending.filter((p) => p.hunk.kind !== 'rename');
  const from = changing.length ? changing : pending;
  return from.length ? Math.min(...from.map((p) => p.line)) : undefined;
}
