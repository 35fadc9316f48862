import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  inPart, isWhole, lineChoices, parsePartResult, partFromChoices, partLabel, partOf, partParams, selectedLines, splittable, toRanges,
} from '../src/logic/parts';
import { hunk } from './fixtures';

const sel = (a: number, ac: number, b: number, bc: number) => ({ start: { line: a, character: ac }, end: { line: b, character: bc } });
const lines = (...ls: number[]) => new Set(ls);

test('selected lines: a cursor is its line; a selection ending at column 0 leaves that line out; several selections add up', () => {
  assert.deepEqual([...selectedLines([sel(4, 3, 4, 3)])], [4]);
  assert.deepEqual([...selectedLines([sel(4, 0, 6, 0)])], [4, 5]);
  assert.deepEqual([...selectedLines([sel(4, 2, 6, 1)])], [4, 5, 6]);
  assert.deepEqual([...selectedLines([sel(6, 1, 4, 2)])].sort(), [4, 5, 6], 'a selection made upwards');
  assert.deepEqual([...selectedLines([sel(1, 0, 1, 5), sel(3, 0, 4, 0)])].sort(), [1, 3]);
});

// The contract's example: [l5, l6, l7] -> [A, B, C, D], lines 4..6 (0-based) of the file.
const unequal = hunk({ id: 'u', lines: [4, 7], oldText: 'l5\nl6\nl7\n', newText: 'A\nB\nC\nD\n' });
// A replacement line by line: 3 old lines by 3 new ones at lines 10..12.
const equal = hunk({ id: 'e', lines: [10, 13], oldText: 'a\nb\nc\n', newText: 'A\nB\nC\n' });
const insertion = hunk({ id: 'i', lines: [20, 20], oldText: '', newText: 'x\ny\n' });
const deletion = hunk({ id: 'd', lines: [30, 32], oldText: 'p\nq\n', newText: '' });

test('the old side (a file, the current side of a review): the selected old lines; new lines line by line when the counts match', () => {
  assert.deepEqual(partOf(equal, 'old', 10, lines(11)), { hunkId: 'e', old: [1], new: [1] });
  assert.deepEqual(partOf(equal, 'old', 10, lines(9, 10, 11)), { hunkId: 'e', old: [0, 1], new: [0, 1] });
  assert.equal(partOf(equal, 'old', 10, lines(9, 13)), undefined, 'lines around the hunk do not touch it');
});

test('the old side of an unequal hunk: the selected old lines and all new lines', () => {
  assert.deepEqual(partOf(unequal, 'old', 4, lines(4)), { hunkId: 'u', old: [0], new: [0, 1, 2, 3] });
  const whole = partOf(unequal, 'old', 4, lines(4, 5, 6))!;
  assert.ok(isWhole(whole, unequal));
  assert.ok(!isWhole(partOf(unequal, 'old', 4, lines(5))!, unequal));
});

test('the new side (the proposal side of a review): the selected new lines, old lines by the same rule', () => {
  // The unequal hunk's new lines at lines 4..7 of the proposal text.
  assert.deepEqual(partOf(unequal, 'new', 4, lines(4, 5)), { hunkId: 'u', old: [0, 1, 2], new: [0, 1] });
  assert.deepEqual(partOf(equal, 'new', 10, lines(12)), { hunkId: 'e', old: [2], new: [2] });
  assert.equal(partOf(unequal, 'new', 4, lines(8)), undefined);
});

test('a side without lines is touched next to where it sits and stands for the whole hunk', () => {
  // An insertion seen in the file: it goes before line 20; the lines 19 and 20 touch it.
  assert.deepEqual(partOf(insertion, 'old', 20, lines(19)), { hunkId: 'i', old: [], new: [0, 1] });
  assert.deepEqual(partOf(insertion, 'old', 20, lines(20)), { hunkId: 'i', old: [], new: [0, 1] });
  assert.equal(partOf(insertion, 'old', 20, lines(18, 21)), undefined);
  // A deletion seen in the proposal: the text after it starts at line 28.
  assert.deepEqual(partOf(deletion, 'new', 28, lines(28)), { hunkId: 'd', old: [0, 1], new: [] });
  // In the file, a deletion's old lines are selected one by one.
  assert.deepEqual(partOf(deletion, 'old', 30, lines(31)), { hunkId: 'd', old: [1], new: [] });
});

test('ranges, params and labels as the protocol and `stet show` number them', () => {
  assert.deepEqual(toRanges([5, 0, 1, 2, 2]), [[0, 2], [5, 5]]);
  assert.deepEqual(toRanges([]), []);
  assert.deepEqual(partParams({ hunkId: 'u', old: [0], new: [0, 1] }), { hunkId: 'u', old: [[0, 0]], new: [[0, 1]] });
  assert.deepEqual(partParams({ hunkId: 'u', old: [], new: [1] }, 'not this one'), { hunkId: 'u', old: [], new: [[1, 1]], feedback: 'not this one' });
  assert.deepEqual(partParams({ hunkId: 'u', old: [], new: [1] }, null), { hunkId: 'u', old: [], new: [[1, 1]] });
  assert.equal(partLabel({ old: [0, 2, 3], new: [0, 1] }), '-1 -3–4 +1–2');
  assert.equal(partLabel({ old: [], new: [4] }), '+5');
});

test('choosing lines from a list: old lines first, then new; the choice makes a part; a part preselects its lines', () => {
  const choices = lineChoices(unequal);
  assert.deepEqual(choices.map((c) => `${c.side}${c.index}:${c.text}`), ['old0:l5', 'old1:l6', 'old2:l7', 'new0:A', 'new1:B', 'new2:C', 'new3:D']);
  const part = partFromChoices('u', [choices[4], choices[0], choices[3]]);
  assert.deepEqual(part, { hunkId: 'u', old: [0], new: [0, 1] });
  assert.deepEqual(choices.filter((c) => inPart(part, c)).map((c) => c.text), ['l5', 'A', 'B']);
  assert.ok(!inPart(undefined, choices[0]));
});

test('only pending edits with lines can be split', () => {
  assert.ok(splittable(unequal));
  assert.ok(!splittable({ ...unequal, status: 'accepted' }));
  assert.ok(!splittable({ ...unequal, kind: 'create' }));
  assert.ok(!splittable({ ...unequal, oldText: '', newText: '' }));
});

test('the answer of stet.acceptLines: the part and the rest (null when the part was the whole hunk)', () => {
  const part = hunk({ id: 'p' });
  const rest = hunk({ id: 'r' });
  assert.deepEqual(parsePartResult({ part, rest }), { part, rest });
  assert.deepEqual(parsePartResult({ part, rest: null }), { part, rest: null });
  assert.equal(parsePartResult({ hunks: [part] }), undefined);
  assert.equal(parsePartResult(null), undefined);
});
