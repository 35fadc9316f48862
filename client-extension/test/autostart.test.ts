import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shouldStart } from '../src/logic/autostart';

test('auto starts only where a folder has .stet; always starts everywhere', () => {
  assert.equal(shouldStart('auto', []), false);
  assert.equal(shouldStart('auto', [false, false]), false);
  assert.equal(shouldStart('auto', [false, true]), true);
  assert.equal(shouldStart(undefined, [true]), true);
  assert.equal(shouldStart('always', []), true);
});

test('a store named in stet.server.db starts the server without a .stet folder', () => {
  assert.equal(shouldStart('auto', [false], true), true);
  assert.equal(shouldStart('auto', [], true), true);
  assert.equal(shouldStart('auto', [false], false), false);
});
