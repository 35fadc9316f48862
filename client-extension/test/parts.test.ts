import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  filePartOf, inPart, isWhole, lineChoices, parsePartResult, partFromChoices, partLabel, partOf, partParams, rowNames, selectedLines, splittable, toRanges,
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

test('the current side (of a review or a Diff): the selected old lines, nothing else', () => {
  assert.deepEqual(partOf(equal, 'old', 10, lines(11)), { hunkId: 'e', old: [1], new: [] });
  assert.deepEqual(partOf(unequal, 'old', 4, lines(3, 4, 5)), { hunkId: 'u', old: [0, 1], new: [] });
  assert.equal(partOf(equal, 'old', 10, lines(9, 13)), undefined, 'lines around the hunk do not touch it');
});

test('the proposal side: the selected new lines, nothing else; all of them and all old lines is the whole hunk', () => {
  // The unequal hunk's new lines at lines 4..7 of the proposal text.
  assert.deepEqual(partOf(unequal, 'new', 4, lines(4, 5)), { hunkId: 'u', old: [], new: [0, 1] });
  assert.deepEqual(partOf(equal, 'new', 10, lines(12)), { hunkId: 'e', old: [], new: [2] });
  assert.equal(partOf(unequal, 'new', 4, lines(8)), undefined);
  assert.ok(!isWhole(partOf(unequal, 'new', 4, lines(4, 5, 6, 7))!, unequal));
  assert.ok(isWhole({ hunkId: 'u', old: [0, 1, 2], new: [0, 1, 2, 3] }, unequal));
});

test('a side without lines is touched next to where it sits and stands for the whole hunk', () => {
  // An insertion seen from the old side: it goes before line 20; the lines 19 and 20 touch it.
  assert.deepEqual(partOf(insertion, 'old', 20, lines(19)), { hunkId: 'i', old: [], new: [0, 1] });
  assert.deepEqual(partOf(insertion, 'old', 20, lines(20)), { hunkId: 'i', old: [], new: [0, 1] });
  assert.equal(partOf(insertion, 'old', 20, lines(18, 21)), undefined);
  // A deletion seen from the proposal: the text after it starts at line 28.
  assert.deepEqual(partOf(deletion, 'new', 28, lines(28)), { hunkId: 'd', old: [0, 1], new: [] });
  // From the old side, a deletion's lines are chosen one by one.
  assert.deepEqual(partOf(deletion, 'old', 30, lines(31)), { hunkId: 'd', old: [1], new: [] });
});

test('in the file, a line carries what it shows: ghost text brings its new line (the last old line the new lines beyond)', () => {
  // style ghost: old line i shows new line i; the last shows the rest.
  assert.deepEqual(filePartOf(equal, lines(11), 'ghost'), { hunkId: 'e', old: [1], new: [1] });
  assert.deepEqual(filePartOf(unequal, lines(6), 'ghost'), { hunkId: 'u', old: [2], new: [2, 3] });
  assert.ok(isWhole(filePartOf(unequal, lines(4, 5, 6), 'ghost')!, unequal));
  // A one-line change (ghost text under the default style too): the cursor on it is the whole hunk.
  const one = hunk({ id: 'o', lines: [3, 4], oldText: 'a\n', newText: 'b\n' });
  assert.ok(isWhole(filePartOf(one, lines(3), 'lines')!, one));
  // Lines removed with one new line: only the first old line carries it.
  const shrink = hunk({ id: 's', lines: [3, 6], oldText: 'a\nb\nc\n', newText: 'z\n' });
  assert.deepEqual(filePartOf(shrink, lines(4), 'lines'), { hunkId: 's', old: [1], new: [] });
  assert.deepEqual(filePartOf(shrink, lines(3), 'lines'), { hunkId: 's', old: [0], new: [0] });
});

test('in the file, a block (two or more new lines) or no inline text: the old lines only', () => {
  assert.deepEqual(filePartOf(unequal, lines(5), 'lines'), { hunkId: 'u', old: [1], new: [] });
  assert.deepEqual(filePartOf(equal, lines(11), 'off'), { hunkId: 'e', old: [1], new: [] });
  assert.deepEqual(filePartOf(insertion, lines(19), 'lines'), { hunkId: 'i', old: [], new: [0, 1] });
});

test('in the file, a kept capture shows its new lines: those are what a selection picks', () => {
  const kept = { ...unequal, kept: true, inFile: true, range: { start: { line: 4, character: 0 }, end: { line: 8, character: 0 } } };
  assert.deepEqual(filePartOf(kept, lines(5, 6), 'lines'), { hunkId: 'u', old: [], new: [1, 2] });
  assert.equal(filePartOf(kept, lines(8), 'lines'), undefined);
  // The developer put the old text back: the file shows the old lines again.
  assert.deepEqual(filePartOf({ ...kept, inFile: false }, lines(5), 'lines'), { hunkId: 'u', old: [1], new: [] });
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

test('hunks starting on one line are named as the server names their lenses: part / rest, else change N', () => {
  // After undoing a part: the original superseded, its part pending again, its rest stale, on line 4.
  const rest = hunk({ id: 'rest', status: 'stale', lines: [4, 6], oldText: 'b\nA\n' });
  const part = hunk({ id: 'part', lines: [4, 6], oldText: 'a\nb\n' });
  const original = hunk({ id: 'orig', status: 'superseded', lines: [4, 7], parts: ['part', 'rest'] });
  const far = hunk({ id: 'far', lines: [20, 21] });
  assert.deepEqual([...rowNames([rest, original, part, far])], [['part', 'part'], ['rest', 'rest']]);
  // Two hunks of no split on one line: numbered, the shorter (an insertion) first; a decided one is not counted.
  const edit = hunk({ id: 'a-edit', lines: [4, 6] });
  const insert = hunk({ id: 'z-ins', lines: [4, 4], oldText: '' });
  const done = hunk({ id: 'done', status: 'rejected', lines: [4, 5] });
  assert.deepEqual([...rowNames([edit, done, insert])], [['z-ins', 'change 1'], ['a-edit', 'change 2']]);
  assert.equal(rowNames([edit, far]).size, 0);
});
