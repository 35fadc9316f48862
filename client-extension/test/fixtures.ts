import { HunkState } from '../src/logic/hunk';

let n = 0;
/** A HunkState with sensible defaults; `lines` is [firstLine, lineAfterLast] of the old text. */
export function hunk(over: Partial<HunkState> & { lines?: [number, number] } = {}): HunkState {
  const { lines, ...rest } = over;
  const [a, b] = lines ?? [0, 1];
  n++;
  return {
    id: `h${n}`,
    proposalId: 'p1',
    taskId: null,
    uri: 'file:///w/a.py',
    kind: 'edit',
    status: 'pending',
    range: { start: { line: a, character: 0 }, end: { line: b, character: 0 } },
    oldText: 'old\n',
    newText: 'new\n',
    newUri: null,
    message: null,
    feedback: null,
    version: 1,
    decidedAt: null,
    ...rest,
  };
}
