import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bulkPlan, scopeLabel } from '../src/logic/bulk';
import { Scope, parseScopeKey, reviewFiles, reviewHunks, scopeKey, scopeTitle } from '../src/logic/review';
import { groupHunks, proposalLabel } from '../src/logic/tree';
import { filterByTurn, inTurn, isTurn, sameTurn, turnLabel, turnsOf } from '../src/logic/turns';
import { hunk } from './fixtures';

const S1 = '6f1c2a9e-0b7d-4e1a-9c55-2f0e8d1b3a77';
const S2 = 'aaaa-session-two';
const A = 'file:///w/a.py';
const B = 'file:///w/b.py';

// Two turns of session 1 (each a proposal of the hooks' capture), one of session 2, and a proposal without a turn.
const hs = [
  hunk({ id: '1', uri: A, proposalId: 'c1', taskId: `claude-${S1}`, turn: { session: S1, number: 1 }, status: 'applied', message: 'first' }),
  hunk({ id: '2', uri: A, proposalId: 'c2', taskId: `claude-${S1}`, turn: { session: S1, number: 2 }, message: 'second' }),
  hunk({ id: '3', uri: B, proposalId: 'c2', taskId: `claude-${S1}`, turn: { session: S1, number: 2 }, lines: [5, 6] }),
  hunk({ id: '4', uri: B, proposalId: 'c3', taskId: `claude-${S2}`, turn: { session: S2, number: 1 } }),
  hunk({ id: '5', uri: A, proposalId: 'p9', taskId: null, lines: [9, 10] }),
];

test('the turns the hunks carry: per session, the latest first, with what is pending', () => {
  const turns = turnsOf(hs);
  assert.deepEqual(turns.map((t) => [t.turn.session, t.turn.number, t.pending, t.total]), [
    [S1, 2, 2, 2], [S1, 1, 0, 1], [S2, 1, 1, 1],
  ]);
  assert.equal(turns[0].message, 'second');
  assert.equal(turnLabel({ session: S1, number: 2 }), 'turn 2 of session 6f1c2a9e');
});

test('a turn filter shows that turn\'s hunks only; without one, everything (hunks without a turn too)', () => {
  const two = { session: S1, number: 2 };
  assert.deepEqual(filterByTurn(hs, two).map((h) => h.id), ['2', '3']);
  assert.equal(filterByTurn(hs, undefined).length, 5);
  assert.ok(inTurn(hs[1], two) && !inTurn(hs[4], two) && !inTurn(hs[3], { session: S2, number: 2 }));
  assert.ok(sameTurn(two, { ...two }) && !sameTurn(two, undefined) && !sameTurn(null, null));
  assert.ok(!isTurn({ session: S1 }) && !isTurn(null) && !isTurn({ session: 1, number: 1 }));
  // A server may send anything in an optional field: a malformed turn is no turn.
  assert.equal(turnsOf([hunk({ turn: { session: S1 } as never })]).length, 0);
});

test('the all-changes view of one turn: its scope, its files, its pending hunks; bulk decisions keep to it', () => {
  const scope: Scope = { kind: 'turn', session: S1, number: 2 };
  assert.deepEqual(parseScopeKey(scopeKey(scope)), scope);
  assert.deepEqual(parseScopeKey('turn:x:abc'), undefined);
  assert.deepEqual(parseScopeKey('turn:3:a:b'), { kind: 'turn', number: 3, session: 'a:b' });
  assert.equal(scopeTitle(scope), 'Stet: turn 2 (session 6f1c2a9e)');
  assert.equal(scopeLabel(scope), 'turn 2 of session 6f1c2a9e');
  assert.deepEqual(reviewHunks(hs, scope).map((h) => h.id), ['2', '3']);
  assert.deepEqual(reviewFiles(hs, scope), [A, B]);
  assert.deepEqual(bulkPlan(hs, scope).params.hunkIds, ['2', '3']);
  assert.deepEqual(reviewHunks(hs, { kind: 'turn', session: S1, number: 1 }), [], 'a decided turn shows nothing');
});

test('the Stet view names a captured proposal by its turn; other proposals keep their id', () => {
  const task = groupHunks(hs).find((t) => t.taskId === `claude-${S1}`)!;
  assert.deepEqual(task.proposals.map((p) => [p.proposalId, p.turn?.number]), [['c1', 1], ['c2', 2]]);
  assert.equal(proposalLabel(task.proposals[1]), 'Turn 2: second');
  const none = groupHunks(hs).find((t) => t.taskId === null)!.proposals[0];
  assert.equal(none.turn, null);
  assert.equal(proposalLabel(none), 'p9');
  assert.equal(proposalLabel({ ...none, message: 'why' }), 'p9: why');
});
