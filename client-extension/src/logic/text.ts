// Building the proposal-applied text for the diff view: the document with hunks' new text spliced in.
import { HunkState, Position, replacementText } from './hunk';

/** Offsets (UTF-16) where each line starts; LSP counts \n, \r\n and \r as line ends. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13 /* \r */) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    } else if (c === 10 /* \n */) {
      starts.push(i + 1);
    }
  }
  return starts;
}

/** Offset of an LSP position, clamped to the text like VS Code does. */
export function offsetAt(text: string, starts: number[], pos: Position): number {
  if (pos.line >= starts.length) return text.length;
  if (pos.line < 0) return 0;
  const lineStart = starts[pos.line];
  const nextStart = pos.line + 1 < starts.length ? starts[pos.line + 1] : text.length;
  return Math.min(lineStart + Math.max(0, pos.character), nextStart);
}

/**
 * The text with each hunk's range replaced by its new text. Hunks must not overlap (the server
 * guarantees disjoint hunks per file); they are applied bottom-up so earlier offsets stay valid.
 */
export function applyHunks(text: string, hunks: HunkState[]): string {
  const starts = lineStarts(text);
  const edits = hunks
    .map((h) => ({ from: offsetAt(text, starts, h.range.start), to: offsetAt(text, starts, h.range.end), text: replacementText(h) }))
    .sort((a, b) => b.from - a.from || b.to - a.to);
  let out = text;
  for (const e of edits) out = out.slice(0, e.from) + e.text + out.slice(e.to);
  return out;
}

/** Does the text under the hunk's range still read as its old text? (false: the diff may be off) */
export function matchesOldText(text: string, h: HunkState): boolean {
  const starts = lineStarts(text);
  return text.slice(offsetAt(text, starts, h.range.start), offsetAt(text, starts, h.range.end)) === h.oldText;
}

/** Lines of a hunk text without their terminators ("a\nb\n" -> ["a", "b"]). */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r\n|\r|\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
