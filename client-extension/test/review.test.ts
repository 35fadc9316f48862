import { test } from 'node:test';
import assert from 'node:assert/strict';
import { baseText, fileLensLine, inScope, layoutProposal, parseScopeKey, reviewFiles, reviewHunks, scopeKey, scopeTitle, spanAtLine, unkeep, Scope } from '../src/logic/review';
import { splitLines } from '../src/logic/text';
import { hunk } from './fixtures';

const A = 'file:///w/a.py';
const B = 'file:///w/b.py';

test('scope keys round-trip, including uris and ids with colons', () => {
  const scopes: Scope[] = [{ kind: 'all' }, { kind: 'proposal', proposalId: 'p:1' }, { kind: 'task', taskId: 't1' }, { kind: 'file', uri: A }];
  for (const s of scopes) assert.deepEqual(parseScopeKey(scopeKey(s)), s);
  assert.equal(parseScopeKey('nonsense'), undefined);
  assert.equal(parseScopeKey('other:x'), undefined);
  assert.equal(scopeTitle({ kind: 'task', taskId: 't1' }), 'Stet: task t1');
  assert.equal(scopeTitle({ kind: 'file', uri: A }), 'Stet: a.py');
});

test('a review shows the pending and accepted hunks of its scope, files in order', () => {
  const hs = [
    hunk({ id: '1', uri: B, proposalId: 'p1', taskId: 't1' }),
    hunk({ id: '2', uri: A, proposalId: 'p2', taskId: 't1', status: 'accepted' }),
    hunk({ id: '3', uri: A, proposalId: 'p2', taskId: null, status: 'stale' }),
    hunk({ id: '4', uri: A, proposalId: 'p3', taskId: 't2', status: 'applied' }),
    hunk({ id: '5', uri: A, proposalId: 'p3', taskId: 't2' }),
  ];
  assert.deepEqual(reviewHunks(hs, { kind: 'all' }).map((h) => h.id), ['1', '2', '5']);
  assert.deepEqual(reviewHunks(hs, { kind: 'task', taskId: 't1' }).map((h) => h.id), ['1', '2']);
  assert.deepEqual(reviewHunks(hs, { kind: 'proposal', proposalId: 'p3' }).map((h) => h.id), ['5']);
  assert.deepEqual(reviewFiles(hs, { kind: 'all' }), [A, B]);
  assert.deepEqual(reviewFiles(hs, { kind: 'file', uri: B }), [B]);
  assert.ok(inScope(hs[0], { kind: 'file', uri: B }) && !inScope(hs[0], { kind: 'file', uri: A }));
});

// A file of 20 lines: a 12-line replacement of lines 2–4, an insertion before line 10, a deletion of 15–16.
const base = Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join('');
const twelve = Array.from({ length: 12 }, (_, i) => `new ${i}\n`).join('');
const replace = hunk({ id: 'r', lines: [2, 5], oldText: 'line 2\nline 3\nline 4\n', newText: twelve });
const insert = hunk({ id: 'i', lines: [10, 10], oldText: '', newText: 'ins a\nins b\n' });
const remove = hunk({ id: 'd', lines: [15, 17], oldText: 'line 15\nline 16\n', newText: '' });

test('layout: the proposal text and where each hunk lands in it', () => {
  const l = layoutProposal(base, [remove, insert, replace]);
  const lines = splitLines(l.text);
  assert.equal(lines.length, 20 - 3 + 12 + 2 - 2);
  assert.deepEqual(l.spans, [
    { hunkId: 'r', line: 2, lines: 12 },
    { hunkId: 'i', line: 19, lines: 2 },
    { hunkId: 'd', line: 26, lines: 0 },
  ]);
  assert.equal(lines[2], 'new 0');
  assert.equal(lines[13], 'new 11');
  assert.equal(lines[14], 'line 5');
  assert.deepEqual(lines.slice(19, 21), ['ins a', 'ins b']);
  assert.equal(lines[26], 'line 17'); // lines 15 and 16 are gone
  assert.deepEqual(l.skipped, []);
});

test('layout leaves out a hunk whose old text is no longer there', () => {
  const moved = base.replace('line 3\n', 'LINE 3\n');
  const l = layoutProposal(moved, [replace, insert]);
  assert.deepEqual(l.skipped, ['r']);
  assert.deepEqual(l.spans, [{ hunkId: 'i', line: 10, lines: 2 }]);
  assert.ok(l.text.includes('LINE 3'));
});

test('layout of file operations: creation, deletion, rename', () => {
  const create = hunk({ id: 'c', kind: 'create', lines: [0, 0], oldText: '', newText: 'a\nb\n' });
  assert.equal(baseText('ignored', [create]), '');
  assert.equal(baseText(undefined, []), '');
  assert.deepEqual(layoutProposal('', [create]), { text: 'a\nb\n', spans: [{ hunkId: 'c', line: 0, lines: 2 }], skipped: [] });
  const del = hunk({ id: 'x', kind: 'delete', lines: [0, 2], oldText: 'a\nb\n', newText: '' });
  assert.equal(layoutProposal('a\nb\n', [del]).text, '');
  const ren = hunk({ id: 'n', kind: 'rename', lines: [0, 0], oldText: '', newText: '', newUri: B });
  assert.deepEqual(layoutProposal('a\n', [ren]), { text: 'a\n', spans: [{ hunkId: 'n', line: 0, lines: 0 }], skipped: [] });
});

test('spanAtLine: the hunk under a line of the proposal text', () => {
  const { spans } = layoutProposal(base, [replace, insert, remove]);
  assert.equal(spanAtLine(spans, 2)?.hunkId, 'r');
  assert.equal(spanAtLine(spans, 13)?.hunkId, 'r');
  assert.equal(spanAtLine(spans, 14), undefined);
  assert.equal(spanAtLine(spans, 20)?.hunkId, 'i');
  assert.equal(spanAtLine(spans, 26)?.hunkId, 'd');
});

test('the file\'s Accept file / Reject file pair sits on its first pending hunk, wherever that is', () => {
  const placed = (text: string, hs: ReturnType<typeof hunk>[]) => {
    const layout = layoutProposal(text, hs);
    return layout.spans.map((s) => ({ hunk: hs.find((h) => h.id === s.hunkId)!, line: s.line }));
  };
  // First hunk on line 0 (line 1 for the developer).
  assert.equal(fileLensLine(placed(base, [hunk({ id: 'a', lines: [0, 1], oldText: 'line 0\n', newText: 'zero\n' }), insert])), 0);
  // First hunk far down: the lines above it are folded in the review, the pair goes with the hunk.
  const long = Array.from({ length: 60 }, (_, i) => `line ${i}\n`).join('');
  const far = hunk({ id: 'f', lines: [40, 42], oldText: 'line 40\nline 41\n', newText: Array.from({ length: 15 }, (_, i) => `n${i}\n`).join('') });
  const later = hunk({ id: 'g', lines: [50, 51], oldText: 'line 50\n', newText: 'fifty\n' });
  assert.equal(fileLensLine(placed(long, [later, far])), 40);
  // The same order as the layout: a hunk below the 15-line one moved down by 13 lines.
  assert.deepEqual(placed(long, [later, far]).map((p) => p.line).sort((a, b) => a - b), [40, 63]);
  // The first one accepted (not yet in the file): the pair goes to the first one still pending.
  assert.equal(fileLensLine(placed(long, [later, { ...far, status: 'accepted' }])), 63);
  // A file a hunk creates, or deletes: its only hunk is on line 0, which the review shows.
  assert.equal(fileLensLine(placed('', [hunk({ id: 'c', kind: 'create', oldText: '', newText: 'a\nb\n' })])), 0);
  assert.equal(fileLensLine(placed(base, [hunk({ id: 'x', kind: 'delete', oldText: base, newText: '' })])), 0);
  // A rename changes no line: with an edit far down, the pair goes with the edit.
  const rename = hunk({ id: 'n', kind: 'rename', oldText: '', newText: '', newUri: 'file:///w/b.py' });
  assert.equal(fileLensLine(placed(long, [rename, far])), 40);
  assert.equal(fileLensLine(placed(long, [rename])), 0);
  // Nothing pending: no pair.
  assert.equal(fileLensLine(placed(long, [{ ...far, status: 'accepted' }])), undefined);
});

test('a kept capture (its new text left in the file) shows in the review as the change it is; hunks below it move up or down', () => {
  // The file now: line 1 holds the agent's two lines (kept, old text one line), an ordinary hunk at line 5.
  const now = 'a\nNEW 1\nNEW 2\nc\nd\ne\nf\n';
  const kept = hunk({ id: 'k', lines: [1, 3], oldText: 'b\n', newText: 'NEW 1\nNEW 2\n', kept: true, inFile: true });
  const plain = hunk({ id: 'p', lines: [5, 6], oldText: 'e\n', newText: 'E\n' });
  const { text, hunks } = unkeep(now, [plain, kept]);
  assert.equal(text, 'a\nb\nc\nd\ne\nf\n');
  const byId = Object.fromEntries(hunks.map((h) => [h.id, h.range]));
  assert.deepEqual(byId.k, { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } });
  assert.deepEqual(byId.p, { start: { line: 4, character: 0 }, end: { line: 5, character: 0 } });
  const l = layoutProposal(text, hunks);
  assert.equal(l.text, 'a\nNEW 1\nNEW 2\nc\nd\nE\nf\n');
  assert.deepEqual(l.skipped, []);
  // The developer put the old text back (inFile false), or nothing is kept: nothing to undo.
  assert.deepEqual(unkeep('a\nb\n', [{ ...kept, inFile: false, range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } } }]).text, 'a\nb\n');
  assert.equal(unkeep(base, [replace]).text, base);
});
