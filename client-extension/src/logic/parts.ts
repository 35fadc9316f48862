// Parts of a hunk: which of a hunk's old and new lines a selection in an editor stands for (the server's
// stet.acceptLines / stet.rejectLines take 0-based inclusive index ranges into the hunk's old lines and
// its new lines), and how a part is called in messages ("-2 +2", as `stet show` numbers them).
//
// The rule is the server's (git gui's *Stage Lines*): a selected old line is removed, a selected new line
// is added, and every line not selected stays as it is (its change stays pending). So a part holds what
// the selection shows: on the current side of a review or a Diff, its old lines; on the proposal side, its
// new lines; in the file, the old lines, with the new text shown on them as ghost text (`old ⟶ new`) —
// or, for a hunk whose new text the agent already left in the file (a kept capture), the new lines. A side
// with no lines (an insertion seen from the old side, a deletion from the new side) is touched by a
// selection on the line just above or below where it sits, and stands for the whole hunk.
import { HunkState, isShown, newTextInFile } from './hunk';
import { InlineStyle, showsAsBlock } from './decorations';
import { splitLines } from './text';

export interface PositionLike { line: number; character: number }
export interface SelectionLike { start: PositionLike; end: PositionLike }

/** A part of one hunk: indices into its old lines and its new lines, 0-based, sorted. */
export interface Part { hunkId: string; old: number[]; new: number[] }

export type Side = 'old' | 'new';

/**
 * The document lines a set of selections covers. A cursor covers its line; a selection that ends at
 * column 0 of a later line does not cover that line (a whole-line selection made with Shift+Down).
 */
export function selectedLines(selections: readonly SelectionLike[]): Set<number> {
  const lines = new Set<number>();
  for (const s of selections) {
    const [a, b] = s.start.line <= s.end.line ? [s.start, s.end] : [s.end, s.start];
    const last = b.line > a.line && b.character === 0 ? b.line - 1 : b.line;
    for (let l = a.line; l <= last; l++) lines.add(l);
  }
  return lines;
}

/** How many old lines and new lines a hunk has. */
export function lineCounts(h: Pick<HunkState, 'oldText' | 'newText'>): { old: number; new: number } {
  return { old: splitLines(h.oldText).length, new: splitLines(h.newText).length };
}

export { newTextInFile };

/** Can a hunk be decided in parts? Pending edits with lines to choose from. */
export function splittable(h: HunkState): boolean {
  const c = lineCounts(h);
  return h.status === 'pending' && h.kind === 'edit' && c.old + c.new > 0;
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * The part of `h` that `lines` (document lines) select, in a document showing the hunk's `side` lines from
 * line `first` on; undefined when the selection does not touch the hunk.
 */
export function partOf(h: HunkState, side: Side, first: number, lines: ReadonlySet<number>): Part | undefined {
  const c = lineCounts(h);
  if (c[side] === 0) {
    if (!lines.has(first) && !lines.has(first - 1)) return undefined;
    return { hunkId: h.id, old: upTo(c.old), new: upTo(c.new) };
  }
  const picked = upTo(c[side]).filter((i) => lines.has(first + i));
  if (!picked.length) return undefined;
  return side === 'old' ? { hunkId: h.id, old: picked, new: [] } : { hunkId: h.id, old: [], new: picked };
}

/**
 * The part a selection in the file stands for, as the file shows the hunk (`style`: stet.inlineProposal):
 * its old lines; with the new text as ghost text, old line i also carries new line i, and the last old line
 * the new lines beyond (as `marksFor` draws them); a kept hunk's new lines.
 */
export function filePartOf(h: HunkState, lines: ReadonlySet<number>, style: InlineStyle): Part | undefined {
  const first = h.range.start.line;
  if (newTextInFile(h)) return partOf(h, 'new', first, lines);
  const part = partOf(h, 'old', first, lines);
  const c = lineCounts(h);
  if (!part || style === 'off' || showsAsBlock(h, style) || c.old === 0) return part;
  const carried = new Set<number>();
  for (const i of part.old) {
    if (i < c.new) carried.add(i);
    if (i === c.old - 1) for (let j = i + 1; j < c.new; j++) carried.add(j);
  }
  return { ...part, new: [...carried].sort((a, b) => a - b) };
}

/** Does the part hold every changed line of its hunk (the server then decides the hunk whole)? */
export function isWhole(part: Part, h: Pick<HunkState, 'oldText' | 'newText'>): boolean {
  const c = lineCounts(h);
  return part.old.length === c.old && part.new.length === c.new;
}

/** Sorted indices as inclusive ranges: [0, 1, 2, 5] -> [[0, 2], [5, 5]]. */
export function toRanges(indices: Iterable<number>): [number, number][] {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && last[1] === i - 1) last[1] = i;
    else out.push([i, i]);
  }
  return out;
}

/** The stet.acceptLines / stet.rejectLines argument for a part. */
export function partParams(part: Part, feedback?: string | null): Record<string, unknown> {
  const params: Record<string, unknown> = { hunkId: part.hunkId, old: toRanges(part.old), new: toRanges(part.new) };
  if (feedback) params.feedback = feedback;
  return params;
}

/** "-1 -3–4 +1–2": the part's lines as `stet show` numbers them (1-based; "-" old, "+" new). */
export function partLabel(part: Pick<Part, 'old' | 'new'>): string {
  const fmt = (sign: string, idx: number[]) => toRanges(idx).map(([a, b]) => (a === b ? `${sign}${a + 1}` : `${sign}${a + 1}–${b + 1}`));
  return [...fmt('-', part.old), ...fmt('+', part.new)].join(' ');
}

/** The part picked in a list of the hunk's lines (old lines first, then new lines: see `lineChoices`). */
export interface LineChoice { side: Side; index: number; text: string }

/** Every changed line of a hunk, old lines first, as `stet show` lists them. */
export function lineChoices(h: Pick<HunkState, 'oldText' | 'newText'>): LineChoice[] {
  return [
    ...splitLines(h.oldText).map((text, index) => ({ side: 'old' as const, index, text })),
    ...splitLines(h.newText).map((text, index) => ({ side: 'new' as const, index, text })),
  ];
}

/** The part that a set of picked line choices makes. */
export function partFromChoices(hunkId: string, picked: readonly LineChoice[]): Part {
  const sorted = (side: Side) => picked.filter((c) => c.side === side).map((c) => c.index).sort((a, b) => a - b);
  return { hunkId, old: sorted('old'), new: sorted('new') };
}

/** Is a line choice in a part (to preselect it)? */
export function inPart(part: Part | undefined, c: LineChoice): boolean {
  return Boolean(part && (c.side === 'old' ? part.old : part.new).includes(c.index));
}

/**
 * The result of a part's decision: after the server split the hunk, the part and what is left of it; the
 * part alone when the selection covered the whole hunk (rest null).
 */
export interface PartResult { part: HunkState; rest: HunkState | null }

export function parsePartResult(result: unknown): PartResult | undefined {
  const r = result as { part?: unknown; rest?: unknown } | null | undefined;
  const isHunk = (x: unknown): x is HunkState => Boolean(x) && typeof x === 'object' && typeof (x as { id?: unknown }).id === 'string';
  if (!r || !isHunk(r.part)) return undefined;
  return { part: r.part, rest: isHunk(r.rest) ? r.rest : null };
}

/**
 * Names for the hunks whose lenses share a line (the server's rule, present.py `_names`): an editor draws
 * a line's lenses as one row, and after undoing a part, the part (pending) and its rest (stale) start on
 * the same line. "part" / "rest" for the pieces of a hunk decided in parts (its superseded original says
 * which), else "change"; a name twice on a line is numbered. Hunks alone on their line get none. The
 * hunks counted are the ones the server gives lenses (shown: open, or applied and gone from the file).
 */
export function rowNames(hunks: HunkState[]): Map<string, string> {
  const roles = new Map<string, string>();
  for (const h of hunks) {
    if (h.parts?.length === 2) { roles.set(h.parts[0], 'part'); roles.set(h.parts[1], 'rest'); }
  }
  // Open before stale, then the shorter first, then by id: the server's order (present.py `_row_order`).
  const order = (h: HunkState): [number, number, number, string] => [h.status === 'stale' ? 1 : 0, h.range.end.line, h.range.end.character, h.id];
  const sorted = [...hunks].sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] || (x[3] < y[3] ? -1 : x[3] > y[3] ? 1 : 0);
  });
  const byLine = new Map<number, HunkState[]>();
  for (const h of sorted) if (isShown(h)) byLine.set(h.range.start.line, [...(byLine.get(h.range.start.line) ?? []), h]);
  const names = new Map<string, string>();
  for (const row of byLine.values()) {
    if (row.length < 2) continue;
    const wanted = row.map((h) => roles.get(h.id) ?? 'change');
    row.forEach((h, i) => {
      const twice = wanted.filter((w) => w === wanted[i]).length > 1;
      names.set(h.id, twice ? `${wanted[i]} ${wanted.slice(0, i + 1).filter((w) => w === wanted[i]).length}` : wanted[i]);
    });
  }
  return names;
}
