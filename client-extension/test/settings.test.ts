import { test } from 'node:test';
import assert from 'node:assert/strict';
import { masked, restoredMessage, serverCommand, startFailureMessage, storeOption } from '../src/logic/settings';

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

test('stet.server.db: a url as it is, a relative path in the first folder, empty for the server\'s own choice', () => {
  assert.equal(storeOption('', '/w'), undefined);
  assert.equal(storeOption('   ', '/w'), undefined);
  assert.equal(storeOption(42, '/w'), undefined);
  assert.equal(storeOption(' postgresql://stet@db/shop?sslmode=verify-full ', '/w'), 'postgresql://stet@db/shop?sslmode=verify-full');
  assert.equal(storeOption('postgres://db/shop', '/w'), 'postgres://db/shop');
  assert.equal(storeOption('/srv/review.db', '/w'), '/srv/review.db');
  assert.equal(storeOption('reviews/stet.db', '/w'), '/w/reviews/stet.db');
  assert.equal(storeOption('reviews/stet.db', undefined), 'reviews/stet.db');
});

test('a store url is shown without its password', () => {
  assert.equal(masked('postgresql://stet:s3cret@db/shop'), 'postgresql://stet:***@db/shop');
  assert.equal(masked('postgresql://db/shop?password=s3cret&sslmode=require'), 'postgresql://db/shop?password=***&sslmode=require');
  assert.equal(masked('/srv/review.db'), '/srv/review.db');
});
