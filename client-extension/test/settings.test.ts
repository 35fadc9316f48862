import { test } from 'node:test';
import assert from 'node:assert/strict';
import { restoredMessage, serverCommand, startFailureMessage } from '../src/logic/settings';

test('default command is stet serve', () => {
  assert.deepEqual(serverCommand({}), { command: 'stet', args: ['serve'], source: 'stet.server.command' });
  assert.deepEqual(serverCommand({ command: [] }).command, 'stet');
  assert.deepEqual(serverCommand({ command: 'stet serve' }).args, ['serve']);
});

test('stet.server.python wins over stet.server.command', () => {
  const c = serverCommand({ python: ' /p/.venv/bin/python ', command: ['x'] });
  assert.deepEqual(c, { command: '/p/.venv/bin/python', args: ['-m', 'stet', 'serve'], source: 'stet.server.python' });
  assert.equal(serverCommand({ python: '', command: ['/bin/stet', 'serve', '--db', '/d'] }).args.length, 3);
});

test('the start failure names the setting that fixes it', () => {
  const d = startFailureMessage(serverCommand({}), 'spawn stet ENOENT');
  assert.match(d, /`stet serve`/);
  assert.match(d, /spawn stet ENOENT/);
  assert.match(d, /"stet\.server\.python"/);
  assert.match(d, /"stet\.server\.command"/);
  const p = startFailureMessage(serverCommand({ python: '/nope/python' }), 'exit code 1');
  assert.match(p, /"stet\.server\.python" points to/);
});

test('restored message', () => {
  assert.equal(restoredMessage({ pending: 2, accepted: 1, applied: 5 }), 'Restored review: 2 pending, 1 accepted');
  assert.equal(restoredMessage({ stale: 1 }), 'Restored review: 0 pending, 0 accepted, 1 stale');
});
