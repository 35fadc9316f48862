import { test } from 'node:test';
import assert from 'node:assert/strict';
import { editDocument, editedText } from '../src/logic/editContext';
import { hunk } from './fixtures';

const file = 'a\nb\nc\nd\ne\nf\ng\n';

test('the edit document holds the new text between the lines around the hunk', () => {
  const h = hunk({ lines: [3, 4], oldText: 'd\n', newText: 'D1\nD2\n' });
  const d = editDocument(file, h, 2);
  assert.equal(d.text, 'b\nc\nD1\nD2\ne\nf\n');
  assert.deepEqual([d.before, d.after, d.firstLine, d.beforeLines, d.afterLines], ['b\nc\n', 'e\nf\n', 1, 2, 2]);
  assert.equal(editedText('b\nc\nmine\ne\nf\n', d), 'mine\n');
  assert.equal(editedText(d.text, d), 'D1\nD2\n');
  assert.equal(editedText('b\nc\n\ne\nf\n', d), '\n');
  assert.equal(editedText('b\nc\ne\nf\n', d), ''); // everything between removed: the hunk deletes the line
  assert.equal(editedText('B\nc\nmine\ne\nf\n', d), undefined); // context changed
  assert.equal(editedText('b\nc\nmine\ne\nF\n', d), undefined);
});

test('context is clipped at the top and the end of the file; an insertion keeps its place', () => {
  const top = editDocument(file, hunk({ lines: [0, 1], oldText: 'a\n', newText: 'A\n' }), 3);
  assert.equal(top.text, 'A\nb\nc\nd\n');
  assert.equal(top.firstLine, 0);
  const end = editDocument(file, hunk({ lines: [6, 7], oldText: 'g\n', newText: 'G\n' }), 3);
  assert.equal(end.text, 'd\ne\nf\nG\n');
  assert.equal(end.afterLines, 0);
  const ins = editDocument(file, hunk({ lines: [2, 2], oldText: '', newText: 'new\n' }), 1);
  assert.equal(ins.text, 'b\nnew\nc\n');
  const noEol = editDocument('x\ny', hunk({ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } }, oldText: 'y', newText: 'Y' }), 5);
  assert.equal(noEol.text, 'x\nY');
});

test('CRLF files: the editor may hand back \\n, the text keeps \\r\\n', () => {
  const crlf = 'a\r\nb\r\nc\r\n';
  const d = editDocument(crlf, hunk({ lines: [1, 2], oldText: 'b\r\n', newText: 'B\r\n' }), 1);
  assert.equal(d.text, 'a\r\nB\r\nc\r\n');
  assert.equal(editedText('a\nmine\nc\n', d), 'mine\r\n');
});
