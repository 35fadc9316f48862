import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countsLabel, groupHunks, relativePath, statusIcon } from '../src/logic/tree';
import { countByStatus, lineLabel } from '../src/logic/hunk';
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
