import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countsLabel, decidedByLabel, sentBackLabel, groupContext, groupHunks, hunkContext, hunkDescription, relativePath, statusIcon } from '../src/logic/tree';
import { countByStatus, inFileOf, isMissing, isShown, lineLabel } from '../src/logic/hunk';
import { hunk } from './fixtures';

test('groups tasks -> proposals -> files -> hunks, sorted, tasks without id last', () => {
  const hs = [
    hunk({ id: 'x', taskId: null, proposalId: 'p9', uri: 'file:///w/z.py' }),
    hunk({ id: 'b', taskId: 't1', proposalId: 'p2', uri: 'file:///w/b.py', lines: [5, 6], message: 'why' }),
    hunk({ id: 'a', taskId: 't1', proposalId: 'p2', uri: 'file:///w/b.py', lines: [1, 2], status: 'rejected' }),
    hunk({ id: 'c', taskId: 't1', proposalId: 'p1', uri: 'file:///w/a.py' }),
    hunk({ id: 'd', taskId: 't0', proposalId: 'p3', uri: 'file:///w/a.py' }),
  ];
  const g = groupHunks(hs);
  assert.deepEqual(g.map((t) => t.taskId), ['t0', 't1', null]);
  const t1 = g[1];
  assert.deepEqual(t1.proposals.map((p) => p.proposalId), ['p1', 'p2']);
  assert.equal(t1.proposals[1].message, 'why');
  assert.deepEqual(t1.proposals[1].files[0].hunks.map((h) => h.id), ['a', 'b']);
  assert.equal(t1.counts.pending, 2);
  assert.equal(t1.counts.rejected, 1);
  assert.equal(t1.proposals[1].files[0].counts.pending, 1);
});

test('counts label lists open statuses and sums decided ones', () => {
  const c = countByStatus([
    hunk({ status: 'pending' }), hunk({ status: 'pending' }), hunk({ status: 'stale' }),
    hunk({ status: 'applied' }), hunk({ status: 'rejected' }),
  ]);
  assert.equal(countsLabel(c), '2 pending · 1 stale · 2 decided');
  assert.equal(countsLabel(countByStatus([])), '');
});

test('every status has an icon', () => {
  for (const s of ['pending', 'accepted', 'applied', 'rejected', 'stale', 'superseded'] as const) {
    assert.ok(statusIcon(hunk({ status: s })).length > 0);
  }
});

test('relative path under a root, decoded', () => {
  assert.equal(relativePath('file:///w/src/a%20b.py', ['file:///w']), 'src/a b.py');
  assert.equal(relativePath('file:///elsewhere/x.py', ['file:///w/']), '/elsewhere/x.py');
});

test('line labels for edits and file operations', () => {
  assert.equal(lineLabel(hunk({ lines: [4, 5] })), 'line 5');
  assert.equal(lineLabel(hunk({ lines: [4, 7] })), 'lines 5–7');
  assert.equal(lineLabel(hunk({ lines: [4, 4], oldText: '' })), 'insert before line 5');
  assert.equal(lineLabel(hunk({ kind: 'create' })), 'new file');
  assert.equal(lineLabel(hunk({ kind: 'rename', newUri: 'file:///w/new%20name.py' })), 'rename to new name.py');
  assert.equal(lineLabel(hunk({ kind: 'delete' })), 'delete file');
});

test('inFile: an applied hunk no longer in the file is "missing" everywhere; a missing field reads as null', () => {
  const gone = hunk({ id: 'g', status: 'applied', inFile: false, feedback: null });
  const there = hunk({ status: 'applied', inFile: true });
  const older = hunk({ status: 'applied' });
  const pending = hunk({ status: 'pending', inFile: null });
  assert.equal(inFileOf(older), null);
  assert.equal(inFileOf(there), true);
  assert.ok(isMissing(gone) && !isMissing(there) && !isMissing(older) && !isMissing(pending));
  assert.ok(!isMissing(hunk({ status: 'rejected', inFile: false }))); // only applied hunks can be missing
  assert.ok(isShown(gone) && isShown(pending) && !isShown(there));
  assert.equal(hunkContext(gone), 'hunk.missing');
  assert.equal(hunkContext(there), 'hunk.applied');
  assert.equal(statusIcon(gone), 'warning');
  assert.equal(hunkDescription(gone), 'applied · not in the file any more');
  const g = groupHunks([gone, there, pending]);
  assert.equal(g[0].missing, 1);
  assert.equal(g[0].proposals[0].files[0].missing, 1);
  assert.equal(countsLabel(g[0].counts, g[0].missing), '1 pending · 1 not in file · 1 decided');
});

test('group contexts tell the menus whether bulk buttons apply', () => {
  assert.equal(groupContext('file', [hunk({ status: 'pending' })]), 'file.pending');
  assert.equal(groupContext('task', [hunk({ status: 'applied' })]), 'task');
  assert.equal(hunkDescription(hunk({ status: 'rejected', feedback: 'no' })), 'rejected — “no”');
});

test('a hunk a commit accepted says so, with the commit shortened', () => {
  const sha = 'd4d3973c50a9cef0d2b484a413dfffd398113968';
  assert.equal(hunkDescription(hunk({ status: 'applied', decidedBy: 'commit', commit: sha })), 'applied · accepted by commit d4d3973');
  assert.equal(decidedByLabel({ status: 'pending', decidedBy: 'commit', commit: sha }), '', 'undone: no longer');
  assert.equal(decidedByLabel({ status: 'applied', decidedBy: 'commit', commit: 'not\u202ehex' }), '');
  assert.equal(hunkDescription(hunk({ status: 'applied' })), 'applied');
});

test('a rejection sent back to the agent says so, with the feedback', () => {
  assert.equal(
    hunkDescription(hunk({ status: 'rejected', feedback: 'no', sentBack: true })),
    'rejected · sent back to the agent — “no”',
  );
  assert.equal(sentBackLabel({ status: 'pending', sentBack: true }), '', 'undone: no longer');
  assert.equal(hunkDescription(hunk({ status: 'rejected', feedback: 'no' })), 'rejected — “no”');
});
