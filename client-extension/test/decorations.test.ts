import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BLOCK_MAX_LINES, blockView, hunkAtLine, inlineStyle, marksFor, MAX_GHOST, sameLines, showsAsBlock } from '../src/logic/decorations';
import { hunk } from './fixtures';

test('a modified line shows its new text as ghost text after it', () => {
  const m = marksFor([hunk({ id: 'a', lines: [4, 5], oldText: 'x = 1\n', newText: 'x = 2\n' })]);
  assert.deepEqual(m.lines, [{ line: 4, kind: 'pending', hunkId: 'a', ghost: '  ⟶  x = 2', removed: false }]);
  assert.deepEqual(m.inserts, []);
});

test('surplus new lines ride on the last old line; surplus old lines are struck', () => {
  const grow = marksFor([hunk({ lines: [0, 2], oldText: 'a\nb\n', newText: 'A\nB\nC\n' })]);
  assert.deepEqual(grow.lines.map((l) => l.ghost), ['  ⟶  A', '  ⟶  B ⏎ C']);
  const shrink = marksFor([hunk({ lines: [0, 3], oldText: 'a\nb\nc\n', newText: 'A\n' })]);
  assert.deepEqual(shrink.lines.map((l) => [l.line, l.ghost, l.removed]), [
    [0, '  ⟶  A', false], [1, undefined, true], [2, undefined, true],
  ]);
  const gone = marksFor([hunk({ lines: [5, 7], oldText: 'a\nb\n', newText: '' })]);
  assert.deepEqual(gone.lines.map((l) => [l.line, l.ghost, l.removed]), [[5, undefined, true], [6, '  (removed)', true]]);
});

test('a pure insertion hangs on the line above, or before line 0', () => {
  const mid = marksFor([hunk({ id: 'i', lines: [3, 3], oldText: '', newText: 'p\nq\n' })]);
  assert.deepEqual(mid.lines, []);
  assert.deepEqual(mid.inserts, [{ line: 2, before: false, kind: 'pending', hunkId: 'i', ghost: '  + p ⏎ q' }]);
  const top = marksFor([hunk({ lines: [0, 0], oldText: '', newText: 'head\n' })]);
  assert.equal(top.inserts[0].before, true);
  assert.equal(top.inserts[0].line, 0);
});

test('only open hunks are marked; stale and accepted get their own kind', () => {
  const m = marksFor([
    hunk({ status: 'applied', lines: [0, 1] }),
    hunk({ status: 'rejected', lines: [1, 2] }),
    hunk({ status: 'superseded', lines: [2, 3] }),
    hunk({ status: 'stale', lines: [3, 4] }),
    hunk({ status: 'accepted', lines: [4, 5] }),
    hunk({ kind: 'create', lines: [0, 0] }),
  ]);
  assert.deepEqual(m.lines.map((l) => [l.line, l.kind]), [[3, 'stale'], [4, 'accepted']]);
});

test('ghost text is clipped', () => {
  const long = 'y'.repeat(500);
  const m = marksFor([hunk({ lines: [0, 1], newText: long + '\n' })]);
  assert.ok(m.lines[0].ghost!.length <= MAX_GHOST + 6);
  assert.ok(m.lines[0].ghost!.endsWith('…'));
});

test('hunkAtLine finds the open hunk under the cursor, or an insertion just below it', () => {
  const a = hunk({ id: 'a', lines: [2, 4] });
  const ins = hunk({ id: 'ins', lines: [8, 8], oldText: '' });
  const done = hunk({ id: 'done', lines: [10, 11], status: 'applied' });
  const hs = [a, ins, done];
  assert.equal(hunkAtLine(hs, 3)?.id, 'a');
  assert.equal(hunkAtLine(hs, 4), undefined);
  assert.equal(hunkAtLine(hs, 7)?.id, 'ins');
  assert.equal(hunkAtLine(hs, 8)?.id, 'ins');
  assert.equal(hunkAtLine(hs, 10), undefined);
});

test('an accepted hunk with the developer\'s own text shows that text', () => {
  const m = marksFor([hunk({ status: 'accepted', lines: [0, 1], newText: 'agent\n', appliedText: 'mine\n' })]);
  assert.equal(m.lines[0].ghost, '  ⟶  mine');
});

test('inline style: the old boolean setting maps to lines / off', () => {
  assert.equal(inlineStyle(true), 'lines');
  assert.equal(inlineStyle(undefined), 'lines');
  assert.equal(inlineStyle(false), 'off');
  assert.equal(inlineStyle('ghost'), 'ghost');
  assert.equal(inlineStyle('off'), 'off');
});

test('style lines: a multi-line hunk is a block of whole lines under its struck old lines', () => {
  const twelve = Array.from({ length: 12 }, (_, i) => `new ${i}\n`).join('');
  const h = hunk({ id: 'r', lines: [2, 5], oldText: 'a\nb\nc\n', newText: twelve });
  const m = marksFor([h], 'lines');
  assert.deepEqual(m.blocks, [{ hunkId: 'r', kind: 'pending', afterLine: 4, lines: twelve.trimEnd().split('\n') }]);
  assert.deepEqual(m.lines.map((l) => [l.line, l.ghost, l.removed]), [[2, undefined, true], [3, undefined, true], [4, undefined, true]]);
  assert.equal(m.blocks[0].lines.length, 12);
  assert.ok(showsAsBlock(h, 'lines') && !showsAsBlock(h, 'ghost'));
});

test('style lines: an insertion block goes under the line above; one-line changes stay ghost text', () => {
  const ins = hunk({ id: 'i', lines: [7, 7], oldText: '', newText: 'p\nq\n' });
  const one = hunk({ id: 'o', lines: [1, 2], oldText: 'x\n', newText: 'y\n' });
  const m = marksFor([ins, one], 'lines');
  assert.deepEqual(m.blocks.map((b) => [b.hunkId, b.afterLine, b.lines]), [['i', 6, ['p', 'q']]]);
  assert.deepEqual(m.inserts, []);
  assert.deepEqual(m.lines.map((l) => [l.hunkId, l.ghost]), [['o', '  ⟶  y']]);
  // A stale hunk keeps its marks but no block (its new text may not fit any more).
  assert.deepEqual(marksFor([{ ...ins, status: 'stale' }], 'lines').blocks, []);
});

test('style off: the old lines are marked, no proposed text', () => {
  const m = marksFor([hunk({ lines: [0, 1], newText: 'A\nB\n' }), hunk({ lines: [4, 4], oldText: '', newText: 'x\n' })], 'off');
  assert.deepEqual(m.blocks, []);
  assert.deepEqual(m.inserts, []);
  assert.ok(m.lines.every((l) => l.ghost === undefined));
});

test('an applied hunk whose text is gone gets a missing mark on its lines; with inFile true or absent, none', () => {
  const gone = hunk({ id: 'g', status: 'applied', inFile: false, lines: [3, 5] });
  const there = hunk({ id: 't', status: 'applied', inFile: true, lines: [7, 8] });
  const old = hunk({ id: 'o', status: 'applied', lines: [9, 10] }); // an older server: no inFile field
  const m = marksFor([gone, there, old]);
  assert.deepEqual(m.missing, [{ hunkId: 'g', line: 3 }, { hunkId: 'g', line: 4 }]);
  assert.deepEqual(m.lines, []);
});

test('a block shows every line of a proposal up to BLOCK_MAX_LINES, then the first ones and how many more', () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}`);
  assert.ok(BLOCK_MAX_LINES >= 30 && BLOCK_MAX_LINES <= 40);
  assert.deepEqual(blockView(lines(2)), { shown: lines(2), more: 0 });
  // A 15-line proposal: all 15 lines (VS Code's own comment height cut it at about 13).
  assert.deepEqual(blockView(lines(15)), { shown: lines(15), more: 0 });
  assert.deepEqual(blockView(lines(BLOCK_MAX_LINES)), { shown: lines(BLOCK_MAX_LINES), more: 0 });
  assert.deepEqual(blockView(lines(BLOCK_MAX_LINES + 1)), { shown: lines(BLOCK_MAX_LINES), more: 1 });
  const long = blockView(lines(100));
  assert.equal(long.shown.length, BLOCK_MAX_LINES);
  assert.equal(long.shown[BLOCK_MAX_LINES - 1], `line ${BLOCK_MAX_LINES - 1}`);
  assert.equal(long.more, 100 - BLOCK_MAX_LINES);
  assert.deepEqual(blockView(lines(5), 3), { shown: lines(3), more: 2 });
});

test('a kept capture (the agent left its new text in the file) marks its new lines as the agent\'s change, with what they replaced; no block, nothing struck', () => {
  const kept = hunk({ id: 'k', lines: [2, 4], oldText: 'old a\n', newText: 'new a\nnew b\n', kept: true, inFile: true });
  const m = marksFor([kept], 'lines');
  assert.deepEqual(m.kept, [{ hunkId: 'k', line: 2, ghost: '  ⟵ was: old a' }, { hunkId: 'k', line: 3, ghost: undefined }]);
  assert.deepEqual([m.lines, m.blocks, m.inserts], [[], [], []]);
  // The developer put the old text back: an ordinary pending hunk again.
  const back = marksFor([{ ...kept, inFile: false, range: { start: { line: 2, character: 0 }, end: { line: 3, character: 0 } } }], 'lines');
  assert.equal(back.kept.length, 0);
  assert.equal(back.lines.length, 1);
  // A kept removal: said on the line above.
  const gone = marksFor([hunk({ id: 'g', lines: [5, 5], oldText: 'x\ny\n', newText: '', kept: true, inFile: true })], 'lines');
  assert.deepEqual(gone.kept, [{ hunkId: 'g', line: 4, ghost: '  ⟵ the agent removed: x ⏎ y' }]);
  assert.equal(hunkAtLine([kept], 3), kept);
});

test('sameLines: the same lines whatever their line ends; other lines or lines elsewhere are not', () => {
  assert.equal(sameLines('ONE = 1\r\nTWO = 2\r\n', 'ONE = 1\nTWO = 2\n'), true);
  assert.equal(sameLines('ONE = 1\nTWO = 2\n', 'ONE = 1\nTWO = 2\nA = "a"\n'), false);
  assert.equal(sameLines('', ''), true);
});

// After undoing an accepted part (issue 29): the part pending again on lines 4-6, its rest stale on the
// same lines (its old text was the part's new text): drawn together they read as one hunk.
const part = hunk({ id: 'part', lines: [4, 7], oldText: 'l5\nl6\nl7\n', newText: 'l6\nl7\nA\n' });
const rest = hunk({ id: 'rest', status: 'stale', lines: [4, 7], oldText: 'l6\nl7\nA\n', newText: 'A\nB\nC\nD\n' });

test('a stale hunk on the lines of a pending one draws nothing there: the pending hunk wins its lines', () => {
  for (const order of [[rest, part], [part, rest]]) {
    const m = marksFor(order, 'lines');
    assert.deepEqual(m.blocks.map((b) => b.hunkId), ['part']);
    assert.deepEqual(m.lines.map((l) => [l.line, l.hunkId, l.kind]), [[4, 'part', 'pending'], [5, 'part', 'pending'], [6, 'part', 'pending']]);
    assert.deepEqual(m.inserts, []);
  }
  const ghosts = marksFor([rest, part], 'ghost');
  assert.deepEqual(ghosts.lines.map((l) => [l.hunkId, l.ghost]), [['part', '  ⟶  l6'], ['part', '  ⟶  l7'], ['part', '  ⟶  A']]);
});

test('a stale hunk reaching past the pending one marks its other lines in the gutter only', () => {
  // The part adds A under line 7 (it hangs on line 6); the stale rest held lines 4-7.
  const insert = hunk({ id: 'ins', lines: [7, 7], oldText: '', newText: 'A\nB\n' });
  const wide = hunk({ id: 'wide', status: 'stale', lines: [4, 8], oldText: 'l5\nl6\nl7\nA\n', newText: 'A\nB\nC\nD\n' });
  const m = marksFor([wide, insert], 'lines');
  assert.deepEqual(m.blocks.map((b) => [b.hunkId, b.afterLine]), [['ins', 6]]);
  assert.deepEqual(m.lines, [4, 5, 7].map((line) => ({ line, kind: 'stale', hunkId: 'wide', removed: false, covered: true })));
  const ghost = marksFor([wide, hunk({ id: 'one', lines: [7, 7], oldText: '', newText: 'A\n' })], 'ghost');
  assert.deepEqual(ghost.inserts.map((i) => [i.hunkId, i.ghost]), [['one', '  + A']]);
  assert.ok(ghost.lines.every((l) => l.covered && l.ghost === undefined && l.line !== 6));
});

test('a stale hunk apart from open ones is drawn as before', () => {
  const apart = hunk({ id: 'apart', status: 'stale', lines: [10, 11], oldText: 'x\n', newText: 'y\n' });
  const m = marksFor([part, apart], 'lines');
  assert.deepEqual(m.lines.filter((l) => l.hunkId === 'apart'), [{ line: 10, kind: 'stale', hunkId: 'apart', ghost: '  ⟶  y', removed: false }]);
});

test('the cursor on lines a pending and a stale hunk share picks the pending one', () => {
  assert.equal(hunkAtLine([rest, part], 5)?.id, 'part');
  const wide = hunk({ id: 'wide', status: 'stale', lines: [4, 8] });
  const insert = hunk({ id: 'ins', lines: [7, 7], oldText: '' });
  assert.equal(hunkAtLine([wide, insert], 6)?.id, 'ins');
  assert.equal(hunkAtLine([wide, insert], 5)?.id, 'wide');
});
