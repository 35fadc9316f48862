// "Edit…" opens the hunk's proposed text with the lines around it, so the developer edits it in its place.
// Only the lines between the context may change; saving hands exactly those to stet.accept as `text`.
import { HunkState, lastOldLine, replacementText } from './hunk';
import { lineStarts } from './text';

export interface EditDocument {
  /** before + the proposed text + after. */
  text: string;
  before: string;
  after: string;
  /** 0-based file line of the document's first line (for the title and the line numbers the hint gives). */
  firstLine: number;
  /** Lines of context above and below (to mark them in the editor). */
  beforeLines: number;
  afterLines: number;
}

/** `context` whole lines of the file above and below the hunk's old text, around its new text. */
export function editDocument(fileText: string, h: HunkState, context: number): EditDocument {
  const starts = lineStarts(fileText);
  const lineCount = fileText.endsWith('\n') || fileText.endsWith('\r') || fileText === '' ? starts.length - 1 : starts.length;
  const at = (line: number) => (line >= starts.length ? fileText.length : starts[line]);
  const first = Math.min(h.range.start.line, lineCount);
  const afterStart = Math.min(lastOldLine(h) + 1, lineCount);
  const from = Math.max(0, first - Math.max(0, context));
  const to = Math.min(lineCount, afterStart + Math.max(0, context));
  // Whole lines: `before` ends with a line terminator; a text without one can only end the file.
  const before = fileText.slice(at(from), at(first));
  const middle = replacementText(h);
  const after = fileText.slice(at(afterStart), at(to));
  return {
    text: before + middle + after,
    before,
    after,
    firstLine: from,
    beforeLines: first - from,
    afterLines: to - afterStart,
  };
}

/**
 * The developer's replacement from the saved document: what lies between the unchanged context. undefined
 * when the context lines were changed (the edit would not say which lines it replaces).
 */
export function editedText(saved: string, doc: EditDocument): string | undefined {
  const norm = (s: string) => s.replace(/\r\n/g, '\n');
  const [text, before, after] = [norm(saved), norm(doc.before), norm(doc.after)];
  if (!text.startsWith(before) || !text.endsWith(after) || text.length < before.length + after.length) return undefined;
  let middle = text.slice(before.length, text.length - after.length);
  if (doc.text.includes('\r\n')) middle = middle.replace(/\n/g, '\r\n');
  return middle;
}
