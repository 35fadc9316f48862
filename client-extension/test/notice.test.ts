import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProposalTracker, noticeText } from '../src/logic/notice';
import { visibleDiagnostics } from '../src/logic/diagnostics';
import { hunk } from './fixtures';

test('a proposal is noticed once, only after the review was loaded, counting its pending hunks and files', () => {
  const t = new ProposalTracker();
  const old = hunk({ id: 'o', proposalId: 'p0' });
  assert.deepEqual(t.observe([old]), []); // not loaded yet: nothing is "new"
  t.prime([old]);
  const fresh = [
    hunk({ id: 'a', proposalId: 'p1', uri: 'file:///w/a.py', taskId: 't', message: 'why', agent: 'codex' }),
    hunk({ id: 'b', proposalId: 'p1', uri: 'file:///w/b.py', taskId: 't' }),
    hunk({ id: 'c', proposalId: 'p1', uri: 'file:///w/b.py', taskId: 't' }),
  ];
  const seen = t.observe([old, ...fresh]);
  assert.deepEqual(seen, [{ proposalId: 'p1', taskId: 't', agent: 'codex', message: 'why', hunks: 3, files: 2 }]);
  assert.deepEqual(t.observe([old, ...fresh]), []);
  assert.equal(noticeText(seen[0]), 'codex proposed 3 changes in 2 files — “why”');
  // A decided-only proposal (e.g. replayed) is not news.
  assert.deepEqual(t.observe([hunk({ proposalId: 'p2', status: 'applied' })]), []);
});

test('notice text without an agent name names the proposal', () => {
  assert.equal(noticeText({ proposalId: 'p9', taskId: null, agent: null, message: null, hunks: 1, files: 1 }), 'Proposal p9: 1 change in 1 file');
});

test('Stet diagnostics leave Problems when hidden; other sources stay', () => {
  const ds = [{ source: 'stet', m: 1 }, { source: 'pyright', m: 2 }, { m: 3 }];
  assert.deepEqual(visibleDiagnostics(ds, true), [{ source: 'pyright', m: 2 }, { m: 3 }]);
  assert.equal(visibleDiagnostics(ds, false).length, 3);
});
