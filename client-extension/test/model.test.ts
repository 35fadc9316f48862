import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HunkModel } from '../src/logic/model';
import { hunk } from './fixtures';

test('replaceAll then setUri: the notification carries the full list for a uri', () => {
  const m = new HunkModel();
  const seen: string[][] = [];
  m.onDidChange((u) => seen.push(u));
  m.replaceAll([hunk({ id: 'a', uri: 'file:///a' }), hunk({ id: 'b', uri: 'file:///b' })]);
  assert.equal(m.all().length, 2);
  m.setUri('file:///a', [hunk({ id: 'a', uri: 'file:///a', status: 'applied', version: 2 })]);
  assert.equal(m.get('a')?.status, 'applied');
  m.setUri('file:///b', []);
  assert.deepEqual(m.uris(), ['file:///a']);
  assert.deepEqual(seen, [['file:///a', 'file:///b'], ['file:///a'], ['file:///b']]);
  m.replaceAll([]);
  assert.equal(m.all().length, 0);
});

test('update merges command answers but never goes back in version', () => {
  const m = new HunkModel();
  m.replaceAll([hunk({ id: 'a', status: 'pending', version: 3 })]);
  m.update([hunk({ id: 'a', status: 'rejected', version: 4 })]);
  assert.equal(m.get('a')?.status, 'rejected');
  m.update([hunk({ id: 'a', status: 'pending', version: 2 })]);
  assert.equal(m.get('a')?.status, 'rejected');
  assert.equal(m.openCount(), 0);
  assert.equal(m.counts().rejected, 1);
});

test('uris are normalised on the way in and on lookup', () => {
  const m = new HunkModel((u) => u.replace('%3A', ':'));
  m.replaceAll([hunk({ id: 'a', uri: 'file:///c%3A/x.py' })]);
  assert.equal(m.forUri('file:///c:/x.py').length, 1);
  assert.equal(m.forUri('file:///c%3A/x.py')[0].uri, 'file:///c:/x.py');
});

test('a repeated notification with the same hunks changes nothing and tells no one', () => {
  const m = new HunkModel();
  const events: boolean[] = [];
  m.onDidChange((_u, full) => events.push(full));
  const a = hunk({ id: 'a', uri: 'file:///a' });
  m.replaceAll([a]);
  assert.equal(m.setUri('file:///a', [{ ...a }]), false);
  assert.equal(m.setUri('file:///b', []), false);
  assert.deepEqual(events, [true]);
  assert.equal(m.setUri('file:///a', [{ ...a, version: 2, status: 'rejected' }]), true);
  assert.deepEqual(events, [true, false]);
  m.clear();
  assert.deepEqual(events, [true, false, true]);
});
