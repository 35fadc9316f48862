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

// The second round: a proposal with a 12-line replacement, a pure insertion and a pure deletion in big.py
// (task t-big), and a two-hunk proposal in notes.py in another task (t-side). The lines are chosen so the
// server's zero-context diff yields exactly those hunks (no line of a replacement equals an old one).
export const BIG_BEFORE = `"""Inventory helpers."""
import json


def load(path):
    with open(path) as f:
        return json.load(f)


def total(items):
    result = 0
    for item in items:
        result += item["price"]
    return result


def legacy_report(items):
    print("report")
    print(len(items))


def main():
    items = load("items.json")
    print(total(items))
`;

export const BIG_INSERTED = ['import logging', 'import math', 'LOG = logging.getLogger(__name__)'];

export const BIG_TWELVE = [
  '    """Sum of the prices; items without one are counted and logged."""',
  '    prices = [item.get("price") for item in items]',
  '    missing = prices.count(None)',
  '    if missing:',
  '        LOG.warning("%d items have no price", missing)',
  '    subtotal = math.fsum(p for p in prices if p is not None)',
  '    discount = 0.1 if subtotal > 1000 else 0.0',
  '    if discount:',
  '        LOG.info("discount %.0f%%", discount * 100)',
  '    net = subtotal * (1 - discount)',
  '    LOG.debug("total %s", net)',
  '    return round(net, 2)',
];

export const BIG_AFTER = BIG_BEFORE
  .replace('import json\n', `import json\n${BIG_INSERTED.join('\n')}\n`)
  .replace('    result = 0\n    for item in items:\n        result += item["price"]\n    return result\n', `${BIG_TWELVE.join('\n')}\n`)
  .replace('def legacy_report(items):\n    print("report")\n    print(len(items))\n', '');

export const NOTES_BEFORE = `# Notes
TITLE = "notes"


def show():
    print(TITLE)
`;

export const NOTES_AFTER = NOTES_BEFORE.replace('TITLE = "notes"', 'TITLE = "Notes"').replace('print(TITLE)', 'print(TITLE.upper())');

/** Writes big.py and notes.py; returns the two stet/propose params. */
export function makeSecondRound(dir) {
  fs.writeFileSync(path.join(dir, 'big.py'), BIG_BEFORE);
  fs.writeFileSync(path.join(dir, 'notes.py'), NOTES_BEFORE);
  const uri = (name) => pathToFileURL(path.join(dir, name)).href;
  const whole = (text) => ({ start: { line: 0, character: 0 }, end: { line: text.split('\n').length - 1, character: 0 } });
  return [
    {
      proposalId: 'p-big', taskId: 't-big', agent: 'codex', message: 'Log items without a price; drop the legacy report',
      edit: { changes: { [uri('big.py')]: [{ range: whole(BIG_BEFORE), newText: BIG_AFTER }] } },
    },
    {
      proposalId: 'p-side', taskId: 't-side', agent: 'codex', message: 'Capitalise the notes title',
      edit: { changes: { [uri('notes.py')]: [{ range: whole(NOTES_BEFORE), newText: NOTES_AFTER }] } },
    },
  ];
}

// The third round (task t-far, proposal p-far): far.py, whose first change is far down (line 41, a 15-line
// replacement of 2 lines; a one-line change at line 51), a file the proposal creates (new.py) and one it
// deletes (gone.py).
export const FAR_BEFORE = Array.from({ length: 60 }, (_, i) => `VALUE_${i + 1} = ${i + 1}`).join('\n') + '\n';

export const FAR_FIFTEEN = Array.from({ length: 15 }, (_, i) => `SETTING_${String.fromCharCode(65 + i)} = "${'abcdefghijklmno'[i]}" * ${i + 2}`);

export const FAR_AFTER = FAR_BEFORE
  .replace('VALUE_41 = 41\nVALUE_42 = 42\n', `${FAR_FIFTEEN.join('\n')}\n`)
  .replace('VALUE_51 = 51\n', 'VALUE_51 = 5100\n');

export const NEW_TEXT = '"""A file the agent adds."""\n\n\ndef hello():\n    return "hello"\n';
export const GONE_BEFORE = '# An old module the agent removes.\nOLD = True\n';

/** Writes far.py and gone.py; returns the stet/propose params of the third round. */
export function makeThirdRound(dir) {
  fs.writeFileSync(path.join(dir, 'far.py'), FAR_BEFORE);
  fs.writeFileSync(path.join(dir, 'gone.py'), GONE_BEFORE);
  const uri = (name) => pathToFileURL(path.join(dir, name)).href;
  const whole = (text) => ({ start: { line: 0, character: 0 }, end: { line: text.split('\n').length - 1, character: 0 } });
  const zero = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  return {
    proposalId: 'p-far', taskId: 't-far', agent: 'codex', message: 'Settings instead of values; add new.py; drop gone.py',
    edit: {
      documentChanges: [
        { textDocument: { uri: uri('far.py'), version: null }, edits: [{ range: whole(FAR_BEFORE), newText: FAR_AFTER }] },
        { kind: 'create', uri: uri('new.py') },
        { textDocument: { uri: uri('new.py'), version: null }, edits: [{ range: zero, newText: NEW_TEXT }] },
        { kind: 'delete', uri: uri('gone.py') },
      ],
    },
  };
}

// The fourth round (task t-parts, proposal p-parts): parts.py with two hunks to decide line by line — three
// lines replaced by four (a block in the file), and three lines by three.
export const PARTS_BEFORE = `"""Parts of a hunk."""
ALPHA = 5
BETA = 6
GAMMA = 7


def keep():
    return 0


X = 1
Y = 2
Z = 3
`;

export const PARTS_AFTER = PARTS_BEFORE
  .replace('ALPHA = 5\nBETA = 6\nGAMMA = 7\n', 'A = "a"\nB = "b"\nC = "c"\nD = "d"\n')
  .replace('X = 1\nY = 2\nZ = 3\n', 'X = 10\nY = 20\nZ = 30\n');

/** Writes parts.py; returns the stet/propose params of the fourth round. */
export function makeFourthRound(dir) {
  fs.writeFileSync(path.join(dir, 'parts.py'), PARTS_BEFORE);
  const uri = pathToFileURL(path.join(dir, 'parts.py')).href;
  const whole = { start: { line: 0, character: 0 }, end: { line: PARTS_BEFORE.split('\n').length - 1, character: 0 } };
  return {
    proposalId: 'p-parts', taskId: 't-parts', agent: 'codex', message: 'Letters instead of numbers',
    edit: { changes: { [uri]: [{ range: whole, newText: PARTS_AFTER }] } },
  };
}

// Two turns of a Claude Code session, captured by its hooks: turn 1 changes turn1.py, turn 2 turn2.py.
export const TURN_SESSION = '7d3e9f10-5a2b-4c8d-9e6f-0a1b2c3d4e5f';
export const TURN1_BEFORE = 'FIRST = 1\n';
export const TURN1_AFTER = 'FIRST = "one"\n';
export const TURN2_BEFORE = 'SECOND = 2\n';
export const TURN2_AFTER = 'SECOND = "two"\n';

// The fifth round: a part accepted above the end of the rest of its hunk, then undone.
export const RACE_BEFORE = `"""A part above the rest's end."""
ONE = 1
TWO = 2
THREE = 3


def keep():
    return 0
`;

/** Writes `name` with RACE_BEFORE; returns the stet/propose params (proposal `proposalId`) replacing ONE and TWO by three lines. */
function makeLetters(dir, name, proposalId) {
  fs.writeFileSync(path.join(dir, name), RACE_BEFORE);
  const uri = pathToFileURL(path.join(dir, name)).href;
  const lines = { start: { line: 1, character: 0 }, end: { line: 3, character: 0 } };
  return {
    name,
    params: {
      proposalId, taskId: 't-race', agent: 'codex', message: 'Letters',
      edit: { changes: { [uri]: [{ range: lines, newText: 'A = "a"\nB = "b"\nC = "c"\n' }] } },
    },
  };
}

/** Writes race.py (a fresh name each time: `n`): the letters proposal. */
export function makeFifthRound(dir, n) {
  return makeLetters(dir, `race${n}.py`, `p-race-${n}`);
}

/** Writes undo_part.py (as race.py): the letters proposal. */
export function makeUndoPart(dir) {
  return makeLetters(dir, 'undo_part.py', 'p-undo-part');
}
