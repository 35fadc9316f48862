import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstPending, nextHunk, nextPendingAfter, previousHunk, reviewOrder } from '../src/logic/navigation';
import { hunk } from './fixtures';

const A = 'file:///w/a.py';
const B = 'file:///w/b.py';
const hs = [
  hunk({ id: 'b1', uri: B, lines: [1, 2] }),
  hunk({ id: 'a2', uri: A, lines: [9, 10] }),
  hunk({ id: 'a1', uri: A, lines: [2, 3], status: 'accepted' }),
  hunk({ id: 'a0', uri: A, lines: [0, 1], status: 'applied' }),
];

test('review order: files by uri, hunks by line, decided hunks left out', () => {
  assert.deepEqual(reviewOrder(hs).map((h) => h.id), ['a1', 'a2', 'b1']);
});

test('next goes forward across files and wraps', () => {
  assert.equal(nextHunk(hs, { uri: A, line: 0 })?.id, 'a1');
  assert.equal(nextHunk(hs, { uri: A, line: 2 })?.id, 'a2');
  assert.equal(nextHunk(hs, { uri: A, line: 9 })?.id, 'b1');
  assert.equal(nextHunk(hs, { uri: B, line: 1 })?.id, 'a1');
  assert.equal(nextHunk(hs, { uri: 'file:///w/other.py', line: 0 })?.id, 'a1');
  assert.equal(nextHunk(hs, undefined)?.id, 'a1');
});

test('previous goes backward across files and wraps', () => {
  assert.equal(previousHunk(hs, { uri: B, line: 1 })?.id, 'a2');
  assert.equal(previousHunk(hs, { uri: A, line: 9 })?.id, 'a1');
  assert.equal(previousHunk(hs, { uri: A, line: 2 })?.id, 'b1');
  assert.equal(previousHunk(hs, undefined)?.id, 'b1');
});

test('nothing open: no next, no previous, no first pending', () => {
  const done = [hunk({ status: 'rejected' })];
  assert.equal(nextHunk(done, { uri: A, line: 0 }), undefined);
  assert.equal(previousHunk(done, undefined), undefined);
  assert.equal(firstPending(done), undefined);
});

test('first pending skips accepted and stale', () => {
  assert.equal(firstPending(hs)?.id, 'a2');
});

test('after a decision: the next pending hunk at or below it, never a decided one, across files, wrapping', () => {
  const all = [
    hunk({ id: 'x1', uri: A, lines: [2, 3] }),
    hunk({ id: 'x2', uri: A, lines: [5, 6], status: 'accepted' }),
    hunk({ id: 'x3', uri: A, lines: [8, 9] }),
    hunk({ id: 'y1', uri: B, lines: [0, 1] }),
  ];
  // x1 was just accepted and its range now covers lines 2–4: the next hunk starts at 8 (x2 is accepted, not pending).
  assert.equal(nextPendingAfter(all, ['x1'], { uri: A, line: 2 })?.id, 'x3');
  // A hunk starting on the very line the decided one started on (a removal shifted it up) is next.
  assert.equal(nextPendingAfter(all, ['q'], { uri: A, line: 8 })?.id, 'x3');
  assert.equal(nextPendingAfter(all, ['x3'], { uri: A, line: 8 })?.id, 'y1');
  assert.equal(nextPendingAfter(all, ['y1'], { uri: B, line: 0 })?.id, 'x1');
  assert.equal(nextPendingAfter([hunk({ id: 'only', uri: A })], ['only'], { uri: A, line: 0 }), undefined);
});
