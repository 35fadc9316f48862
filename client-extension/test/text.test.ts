import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyHunks, lineStarts, matchesOldText, offsetAt, splitLines } from '../src/logic/text';
import { hunk } from './fixtures';

test('lineStarts counts \\n, \\r\\n and \\r', () => {
  assert.deepEqual(lineStarts('a\nb\r\nc\rd'), [0, 2, 5, 7]);
  assert.deepEqual(lineStarts(''), [0]);
});

test('offsetAt clamps past the end of a line and of the text', () => {
  const t = 'ab\ncd\n';
  const s = lineStarts(t);
  assert.equal(offsetAt(t, s, { line: 1, character: 1 }), 4);
  assert.equal(offsetAt(t, s, { line: 0, character: 99 }), 3);
  assert.equal(offsetAt(t, s, { line: 9, character: 0 }), t.length);
});

test('applyHunks replaces, inserts and deletes whole lines, bottom-up', () => {
  const text = 'one\ntwo\nthree\nfour\n';
  const out = applyHunks(text, [
    hunk({ lines: [0, 1], oldText: 'one\n', newText: 'ONE\nONE-B\n' }),
    hunk({ lines: [2, 2], oldText: '', newText: 'inserted\n' }),
    hunk({ lines: [3, 4], oldText: 'four\n', newText: '' }),
  ]);
  assert.equal(out, 'ONE\nONE-B\ntwo\ninserted\nthree\n');
});

test('applyHunks handles a last line without newline (range ends at end of document)', () => {
  const text = 'a\nlast';
  const h = hunk({ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 4 } }, oldText: 'last', newText: 'LAST' });
  assert.equal(applyHunks(text, [h]), 'a\nLAST');
  assert.ok(matchesOldText(text, h));
});

test('matchesOldText notices text that moved on', () => {
  const h = hunk({ lines: [1, 2], oldText: 'two\n' });
  assert.ok(matchesOldText('one\ntwo\n', h));
  assert.ok(!matchesOldText('one\nTWO\n', h));
});

test('splitLines drops terminators and the empty tail', () => {
  assert.deepEqual(splitLines('a\r\nb\n'), ['a', 'b']);
  assert.deepEqual(splitLines('a'), ['a']);
  assert.deepEqual(splitLines(''), []);
  assert.deepEqual(splitLines('\n'), ['']);
});

test('applyHunks uses the developer\'s text when there is one', () => {
  assert.equal(applyHunks('a\nb\n', [hunk({ lines: [1, 2], oldText: 'b\n', newText: 'B\n', appliedText: 'mine\n' })]), 'a\nmine\n');
});
