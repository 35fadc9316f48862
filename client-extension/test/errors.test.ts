import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorText } from '../src/logic/errors';

test('errorText: an Error gives its message, anything else its JSON or string form', () => {
  assert.equal(errorText(new Error('boom')), 'boom');
  assert.equal(errorText('plain'), 'plain');
  assert.equal(errorText({ code: -32002 }), '{"code":-32002}');
  assert.equal(errorText(undefined), 'undefined');
});
