// The test workspace: two small Python files and the agent's proposal for them (whole-file edits;
// the server splits them into hunks).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const APP_BEFORE = `import os


def greet(name):
    return "Hello, " + name


def main():
    print(greet("world"))
    print(os.getcwd())


if __name__ == "__main__":
    main()
`;

export const APP_AFTER = `import os


def greet(name):
    return f"Hello, {name}!"


def main():
    print(greet("Stet"))
    print(os.getcwd())


if __name__ == "__main__":
    raise SystemExit(main())
`;

export const UTIL_BEFORE = `def add(a, b):
    return a + b
`;

export const UTIL_AFTER = `def add(a, b):
    """Sum of a and b."""
    return a + b
`;

export function makeWorkspace(dir) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'app.py'), APP_BEFORE);
  fs.writeFileSync(path.join(dir, 'util.py'), UTIL_BEFORE);
  const uri = (name) => pathToFileURL(path.join(dir, name)).href;
  const whole = (text) => ({ start: { line: 0, character: 0 }, end: { line: text.split('\n').length - 1, character: 0 } });
  return {
    proposalId: 'p-e2e',
    taskId: 't-e2e',
    agent: 'e2e',
    message: 'Use f-strings, greet Stet, document add',
    edit: {
      changes: {
        [uri('app.py')]: [{ range: whole(APP_BEFORE), newText: APP_AFTER }],
        [uri('util.py')]: [{ range: whole(UTIL_BEFORE), newText: UTIL_AFTER }],
      },
    },
  };
}
