import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gitConfigDone, requestChangesGitArgs, requestChangesValue } from '../src/logic/requestChanges';

test('on and off write true and false into the checkout', () => {
  assert.deepEqual(requestChangesGitArgs('on', '/w'), ['-C', '/w', 'config', '--local', 'stet.requestChanges', 'true']);
  assert.deepEqual(requestChangesGitArgs('off', '/w'), ['-C', '/w', 'config', '--local', 'stet.requestChanges', 'false']);
});

test('default (or anything else) unsets it: the hook option decides', () => {
  const unset = ['-C', '/w', 'config', '--local', '--unset', 'stet.requestChanges'];
  assert.deepEqual(requestChangesGitArgs('default', '/w'), unset);
  assert.deepEqual(requestChangesGitArgs(undefined, '/w'), unset);
  assert.deepEqual(requestChangesGitArgs(true, '/w'), unset);
  assert.equal(requestChangesValue('ON'), 'default');
});

test('unsetting a key that is not set is no failure', () => {
  const unset = requestChangesGitArgs('default', '/w');
  assert.equal(gitConfigDone(unset, 5), true);
  assert.equal(gitConfigDone(requestChangesGitArgs('on', '/w'), 5), false);
  assert.equal(gitConfigDone(unset, 128), false);
  assert.equal(gitConfigDone(requestChangesGitArgs('off', '/w'), 0), true);
});
