import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bulkDone, bulkPlan, bulkQuestion, needsConfirmation, scopeLabel } from '../src/logic/bulk';
import { hunk } from './fixtures';

const hs = [
  hunk({ id: 'a', uri: 'file:///w/a.py', proposalId: 'p1', taskId: 't1', version: 3 }),
  hunk({ id: 'b', uri: 'file:///w/b.py', proposalId: 'p1', taskId: 't1', version: 1 }),
  hunk({ id: 'c', uri: 'file:///w/a.py', proposalId: 'p2', taskId: 't1' }),
  hunk({ id: 'd', uri: 'file:///w/a.py', proposalId: 'p1', taskId: 't1', status: 'accepted' }),
  hunk({ id: 'e', uri: 'file:///w/c.py', proposalId: 'p3', taskId: 't2' }),
];

test('a bulk plan takes exactly the pending hunks of the scope, with their versions', () => {
  const p = bulkPlan(hs, { kind: 'proposal', proposalId: 'p1' });
  assert.deepEqual(p.params, { hunkIds: ['a', 'b'], expectedVersions: { a: 3, b: 1 } });
  assert.equal(p.files, 2);
  assert.deepEqual(bulkPlan(hs, { kind: 'task', taskId: 't1' }).params.hunkIds, ['a', 'b', 'c']);
  assert.deepEqual(bulkPlan(hs, { kind: 'all' }).params.hunkIds, ['a', 'b', 'c', 'e']);
  // A file node under one proposal: that file, that proposal only (not p2's hunk in the same file).
  const file = bulkPlan(hs, { kind: 'file', uri: 'file:///w/a.py' }, (h) => h.proposalId === 'p1');
  assert.deepEqual(file.params.hunkIds, ['a']);
  assert.equal(bulkPlan(hs, { kind: 'task', taskId: 'nope' }).hunks.length, 0);
});

test('questions and messages say how many hunks in how many files', () => {
  const p = bulkPlan(hs, { kind: 'task', taskId: 't1' });
  assert.equal(bulkQuestion('accept', p, scopeLabel({ kind: 'task', taskId: 't1' })), 'Accept 3 pending hunks in 2 files (task t1)?');
  assert.equal(bulkDone('reject', bulkPlan(hs, { kind: 'proposal', proposalId: 'p3' })), 'Rejected 1 hunk in 1 file.');
  assert.equal(scopeLabel({ kind: 'all' }), 'everything pending');
  assert.equal(scopeLabel({ kind: 'file', uri: 'file:///w/x/y.py' }), 'y.py');
});

test('confirmation past the threshold; a negative threshold never asks; junk falls back to 5', () => {
  assert.equal(needsConfirmation(5, 5), false);
  assert.equal(needsConfirmation(6, 5), true);
  assert.equal(needsConfirmation(1, 0), true);
  assert.equal(needsConfirmation(1000, -1), false);
  assert.equal(needsConfirmation(6, 'x'), true);
  assert.equal(needsConfirmation(5, undefined), false);
});
