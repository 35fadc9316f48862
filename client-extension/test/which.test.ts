import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { findExecutable } from '../src/logic/which';

test('bare names are searched on PATH, paths are checked as given', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'which-'));
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'stet'), '#!/bin/sh\n', { mode: 0o755 });
  const env = { PATH: ['/nonexistent', bin].join(path.delimiter) };
  assert.equal(findExecutable('stet', dir, env, 'linux'), path.join(bin, 'stet'));
  assert.equal(findExecutable('nope', dir, env, 'linux'), undefined);
  assert.equal(findExecutable(path.join(bin, 'stet'), undefined, {}, 'linux'), path.join(bin, 'stet'));
  assert.equal(findExecutable('bin/stet', dir, {}, 'linux'), path.join(bin, 'stet'));
  assert.equal(findExecutable('bin', dir, {}, 'linux'), undefined); // a folder is not a command
  fs.rmSync(dir, { recursive: true });
});
