// Where and what to draw for each open hunk: its old lines, and its new text either as ghost text after
// them or (multi-line hunks, style "lines") as a block of whole lines below them.
import { HunkState, isMissing, isOpen, lastOldLine, newTextInFile, replacementText } from './hunk';
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
  /**
   * A stale hunk's line next to an open hunk that holds lines it shares (see `coveredStale`): only its
   * gutter and overview-ruler mark are drawn, no background and no ghost text.
   */
  covered?: boolean;
}

export interface InsertMark {
  /** Line after whose end (or before whose start, when `before`) the inserted lines are shown. */
  line: number;
  before: boolean;
  kind: DecorationKind;
  hunkId: string;
  ghost: string;
}

/** A multi-line proposal shown as whole lines in a block right below `afterLine` (-1: above line 0). */
export interface BlockMark {
  hunkId: string;
  kind: DecorationKind;
  afterLine: number;
  lines: string[];
}

/** An applied hunk whose text is no longer in the file: a warning marker on the lines it held. */
export interface MissingMark { hunkId: string; line: number }

/**
 * A line of a kept capture's new text (the agent wrote it into the file; pending review): marked as the
 * agent's change, the old text it replaced said as ghost text on the first line.
 */
export interface KeptMark { hunkId: string; line: number; ghost?: string }

export interface HunkMarks { lines: LineMark[]; inserts: InsertMark[]; blocks: BlockMark[]; missing: MissingMark[]; kept: KeptMark[] }

/**
 * How the proposed text shows in the file: `lines` (a hunk with two or more new lines as a block of real
 * lines, one-line changes as ghost text), `ghost` (always ghost text), `off` (only the old lines are marked).
 * The old boolean setting maps true → lines, false → off.
 */
export type InlineStyle = 'lines' | 'ghost' | 'off';

export function inlineStyle(setting: unknown): InlineStyle {
  if (setting === false || setting === 'off') return 'off';
  if (setting === 'ghost') return 'ghost';
  return 'lines';
}

/** Whether a hunk's new text shows as a block of whole lines under this style. */
export function showsAsBlock(h: HunkState, style: InlineStyle): boolean {
  return style === 'lines' && (h.kind === 'edit') && splitLines(replacementText(h)).length >= 2;
}

/**
 * The most lines a block shows. VS Code's comment zone grows with its text (the extension turns off
 * `comments.maxHeight`, which would cut every block at about 13 lines and give it a scrollbar of its own),
 * so a block is as tall as its lines; past this many, it shows the first ones and says how many more there
 * are (the hunk's Diff shows them all), so one long proposal does not push the file apart.
 */
export const BLOCK_MAX_LINES = 30;

/** The lines a block shows, and how many of the proposal's lines it leaves out. */
export function blockView(lines: string[], max = BLOCK_MAX_LINES): { shown: string[]; more: number } {
  if (lines.length <= max) return { shown: lines, more: 0 };
  return { shown: lines.slice(0, max), more: lines.length - max };
}

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
 * Ghost text: old line i shows new line i after it ("old  ⟶  new"); surplus new lines ride on the last
 * old line, joined by ⏎; surplus old lines are struck through. A pure insertion hangs its lines on the
 * line above (or before line 0 at the top of the file). Block (style `lines`, two or more new lines): every
 * old line is struck through and the new lines come as a block after the last old line (for an insertion:
 * after the line above). Only open hunks of kind edit/delete get these marks; applied hunks no longer in
 * the file get a `missing` mark on the lines they held.
 */
export function marksFor(hunks: HunkState[], style: InlineStyle = 'ghost'): HunkMarks {
  const out: HunkMarks = { lines: [], inserts: [], blocks: [], missing: [], kept: [] };
  const held = heldLines(hunks);
  for (const h of hunks) {
    if (coveredStale(h, held)) {
      // The open hunk wins the lines: the stale one marks only the others, without its text.
      for (const line of spanOf(h)) if (!held.has(line)) out.lines.push({ line, kind: 'stale', hunkId: h.id, removed: false, covered: true });
      continue;
    }
    if (isMissing(h)) {
      const first = h.range.start.line;
      for (let l = first; l <= Math.max(first, lastOldLine(h)); l++) out.missing.push({ hunkId: h.id, line: l });
      continue;
    }
    if (!isOpen(h) || (h.kind !== 'edit' && h.kind !== 'delete')) continue;
    if (h.kind === 'edit' && h.status === 'pending' && newTextInFile(h)) {
      out.kept.push(...keptMarks(h));
      continue;
    }
    const kind = kindOf(h);
    const first = h.range.start.line;
    const last = lastOldLine(h);
    const newLines = h.kind === 'delete' ? [] : splitLines(replacementText(h));
    const block = h.status !== 'stale' && showsAsBlock(h, style);
    if (block) out.blocks.push({ hunkId: h.id, kind, afterLine: last < first ? first - 1 : last, lines: newLines });
    const ghostless = block || style === 'off';
    if (last < first) {
      if (ghostless) continue;
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
      else if (ghostless) ghost = undefined;
      else if (i < newLines.length) {
        const rest = isLast ? newLines.slice(i) : [newLines[i]];
        ghost = ARROW + clip(rest.join(NEWLINE));
      } else if (isLast && newLines.length === 0) ghost = '  (removed)';
      // With the new lines in a block below, every old line is removed: it is struck through.
      out.lines.push({ line, kind, hunkId: h.id, ghost, removed: block || i >= newLines.length });
    }
  }
  return out;
}

/** The lines a hunk's marks are drawn on: its old lines; an insertion's, the line it hangs on. */
function spanOf(h: HunkState): number[] {
  const first = h.range.start.line;
  const last = lastOldLine(h);
  if (last < first) return [Math.max(0, first - 1)];
  return Array.from({ length: last - first + 1 }, (_, i) => first + i);
}

/** The lines open hunks other than stale ones are drawn on (old lines, a kept capture's new lines). */
function heldLines(hunks: HunkState[]): Set<number> {
  const held = new Set<number>();
  for (const h of hunks) {
    if (!isOpen(h) || h.status === 'stale' || (h.kind !== 'edit' && h.kind !== 'delete')) continue;
    const lines = h.kind === 'edit' && h.status === 'pending' && newTextInFile(h) ? keptMarks(h).map((m) => m.line) : spanOf(h);
    for (const l of lines) held.add(l);
  }
  return held;
}

/**
 * A stale hunk drawn on lines an open hunk holds would read as one hunk with it (after undoing
 * a part, the part is pending again and its rest stale, on the same lines): its background and ghost text
 * over the pending hunk's red lines and block. Such a stale hunk is drawn as a gutter mark on its other
 * lines only; its lens (the server names it) and its hover say the rest.
 */
export function coveredStale(h: HunkState, held: Set<number>): boolean {
  return h.status === 'stale' && (h.kind === 'edit' || h.kind === 'delete') && spanOf(h).some((l) => held.has(l));
}

/** A kept capture's lines in the file: its new lines, the first saying what they replaced. */
function keptMarks(h: HunkState): KeptMark[] {
  const first = h.range.start.line;
  const n = splitLines(h.newText).length;
  const old = splitLines(h.oldText);
  const was = old.length === 0 ? '  ⟵ the agent added this' : old.length === 1 ? `  ⟵ was: ${old[0].trim()}` : `  ⟵ was ${old.length} lines: ${old[0].trim()} ⏎ …`;
  if (n === 0) return [{ hunkId: h.id, line: Math.max(0, first - (first > 0 ? 1 : 0)), ghost: clip(`  ⟵ the agent removed: ${old.join(NEWLINE)}`) }];
  return Array.from({ length: n }, (_, i) => ({ hunkId: h.id, line: first + i, ghost: i === 0 ? clip(was) : undefined }));
}

/** The open hunk whose lines (or insertion point) include `line`, if any; a stale one only when no other is. */
export function hunkAtLine(hunks: HunkState[], line: number): HunkState | undefined {
  const open = hunks.filter(isOpen);
  return atLine(open.filter((h) => h.status !== 'stale'), line) ?? atLine(open.filter((h) => h.status === 'stale'), line);
}

function atLine(hunks: HunkState[], line: number): HunkState | undefined {
  let best: HunkState | undefined;
  for (const h of hunks) {
    const first = h.range.start.line;
    const last = Math.max(first, lastOldLine(h));
    if (line >= first && line <= last) return h;
    // An insertion point or a hunk just above counts when the cursor sits on the line before it.
    if (!best && lastOldLine(h) < first && line === first - 1) best = h;
  }
  return best;
}

/** Do two texts hold the same lines (whatever their line ends: VS Code gives a buffer one kind)? */
export function sameLines(a: string, b: string): boolean {
  return a.replace(/\r\n?/g, '\n') === b.replace(/\r\n?/g, '\n');
}
