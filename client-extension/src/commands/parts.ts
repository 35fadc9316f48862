// Deciding part of a hunk: *Accept Selected Lines* / *Reject Selected Lines* on a selection inside a hunk —
// in the file, or on either side of a review or a Diff (like the Source Control view's
// *Stage Selected Ranges*) — and *Choose Lines…*, a list of the hunk's lines to tick, for what a selection
// cannot reach (the new lines of a block in the file). The server splits the hunk (stet.acceptLines /
// stet.rejectLines): the part is decided, the rest stays pending as a hunk of its own.
import * as vscode from 'vscode';
import { Deps, describe, target } from '../deps';
import { PROPOSAL_SCHEME } from '../diff';
import { inlineStyle } from '../logic/decorations';
import { errorText } from '../logic/errors';
import { HunkState } from '../logic/hunk';
import { LineChoice, Part, filePartOf, inPart, lineChoices, parsePartResult, partFromChoices, partLabel, partOf, partParams, selectedLines, splittable } from '../logic/parts';
import { parseReviewUri } from '../review';

type Verdict = 'accept' | 'reject';

/** The parts of pending hunks that the editor's selections stand for (one per hunk touched). */
export function selectionParts(deps: Deps, ed: vscode.TextEditor | undefined): Part[] {
  if (!ed) return [];
  const lines = selectedLines(ed.selections);
  const uri = ed.document.uri;
  const oldSide = (hunks: HunkState[]) => hunks.filter(splittable).flatMap((h) => partOf(h, 'old', h.range.start.line, lines) ?? []);
  const newSide = (placed: { hunk: HunkState; line: number }[]) =>
    placed.filter((p) => splittable(p.hunk)).flatMap((p) => partOf(p.hunk, 'new', p.line, lines) ?? []);
  if (uri.scheme === 'file') {
    const style = inlineStyle(vscode.workspace.getConfiguration('stet').get('inlineProposal'));
    return deps.model.forUri(uri.toString()).filter(splittable).flatMap((h) => filePartOf(h, lines, style) ?? []);
  }
  const q = parseReviewUri(uri);
  if (q) return q.side === 'base' ? oldSide(deps.review.placedBase(uri)) : newSide(deps.review.placed(uri));
  if (uri.scheme === PROPOSAL_SCHEME) return newSide(deps.proposals.placed(uri));
  return [];
}

export function register(ctx: vscode.ExtensionContext, deps: Deps): void {
  const { model, client } = deps;

  /** Sends one part's decision; the hunk's block in the file comes down first (and back if it fails). */
  const decidePart = async (verdict: Verdict, part: Part, feedback: string | null): Promise<boolean> => {
    const h = model.get(part.hunkId);
    const what = `lines ${partLabel(part)} of ${describe(h)}`;
    deps.blocks.hide(part.hunkId);
    try {
      const res = parsePartResult(await client.commandResult(verdict === 'accept' ? 'stet.acceptLines' : 'stet.rejectLines', partParams(part, feedback)));
      if (!res) throw new Error('the server answered without the part (it needs stet.acceptLines / stet.rejectLines)');
      const done = verdict === 'accept' ? 'accepted' : 'rejected';
      vscode.window.setStatusBarMessage(`Stet: ${done} ${what}${res.rest ? '; the rest stays pending' : ''}`, 5000);
      return true;
    } catch (e) {
      deps.blocks.restore(part.hunkId);
      void vscode.window.showErrorMessage(`Stet: could not ${verdict} ${what}: ${errorText(e)}`);
      return false;
    } finally {
      // Once the editor is in front again its lenses follow the split (see Deps.refreshLenses).
      setTimeout(() => deps.refreshLenses(), 150);
    }
  };

  /** Decides parts one hunk after another; a rejection asks once for the feedback of all. */
  const decideParts = async (verdict: Verdict, parts: Part[]) => {
    let feedback: string | null = null;
    if (verdict === 'reject') {
      const what = parts.length === 1 ? `lines ${partLabel(parts[0])} of ${describe(model.get(parts[0].hunkId))}` : `the selected lines of ${parts.length} hunks`;
      const asked = await deps.askRejectFeedback(parts.map((p) => p.hunkId), what);
      if (asked === undefined) return;
      feedback = asked;
    }
    for (const part of parts) if (!(await decidePart(verdict, part, feedback))) return;
  };

  /** An explicit part as the argument ({hunkId, old, new}: indices or [first, last] ranges), or none. */
  const explicitPart = (arg: unknown): Part | undefined => {
    const a = arg as { hunkId?: unknown; old?: unknown; new?: unknown } | null | undefined;
    if (!a || typeof a.hunkId !== 'string' || !Array.isArray(a.old) || !Array.isArray(a.new)) return undefined;
    const indices = (xs: unknown[]) => xs.flatMap((x) => (Array.isArray(x) ? Array.from({ length: Number(x[1]) - Number(x[0]) + 1 }, (_, i) => Number(x[0]) + i) : [Number(x)]));
    return { hunkId: a.hunkId, old: indices(a.old), new: indices(a.new) };
  };

  const onSelection = (verdict: Verdict) => async (arg: unknown) => {
    const explicit = explicitPart(arg);
    const parts = explicit ? [explicit] : selectionParts(deps, vscode.window.activeTextEditor);
    if (!parts.length) {
      void vscode.window.showInformationMessage('Stet: select lines inside a pending hunk first (in the file, or on either side of a review or a Diff).');
      return;
    }
    await decideParts(verdict, parts);
  };

  /** A list of the hunk's lines to tick (the selection's part ticked already), then accept or reject them. */
  const chooseLines = async (arg: unknown) => {
    const h = target(deps, arg) ?? model.get(selectionParts(deps, vscode.window.activeTextEditor)[0]?.hunkId ?? '');
    if (!h || !splittable(h)) {
      void vscode.window.showInformationMessage('Stet: no pending hunk here whose lines can be chosen.');
      return;
    }
    const preset = selectionParts(deps, vscode.window.activeTextEditor).find((p) => p.hunkId === h.id);
    type Item = vscode.QuickPickItem & { choice: LineChoice };
    const items: Item[] = lineChoices(h).map((c) => ({
      label: `${c.side === 'old' ? '-' : '+'}${c.index + 1}  ${c.text}`,
      description: c.side === 'old' ? 'current' : 'proposed',
      picked: inPart(preset, c),
      choice: c,
    }));
    const picked = await vscode.window.showQuickPick(items, {
      title: `Stet: lines of ${describe(h)} (− current, + proposed)`,
      placeHolder: 'Tick lines: a − line is removed, a + line is added',
      canPickMany: true,
      ignoreFocusOut: true,
    });
    if (!picked?.length) return;
    const part = partFromChoices(h.id, picked.map((p) => p.choice));
    const verdict = await vscode.window.showQuickPick(
      [{ label: 'Accept these lines', verdict: 'accept' as const }, { label: 'Reject these lines…', verdict: 'reject' as const }],
      { title: `Stet: lines ${partLabel(part)} of ${describe(h)}` },
    );
    if (verdict) await decideParts(verdict.verdict, [part]);
  };

  // The editor context menu and the palette offer the commands while the selection is inside a hunk.
  let shown: boolean | undefined;
  const updateContext = () => {
    const inHunk = selectionParts(deps, vscode.window.activeTextEditor).length > 0;
    if (inHunk === shown) return;
    shown = inHunk;
    void vscode.commands.executeCommand('setContext', 'stet.selectionInHunk', inHunk);
  };

  ctx.subscriptions.push(
    vscode.commands.registerCommand('stet.acceptSelectedLines', onSelection('accept')),
    vscode.commands.registerCommand('stet.rejectSelectedLines', onSelection('reject')),
    vscode.commands.registerCommand('stet.chooseLines', chooseLines),
    vscode.window.onDidChangeTextEditorSelection((e) => e.textEditor === vscode.window.activeTextEditor && updateContext()),
    vscode.window.onDidChangeActiveTextEditor(() => updateContext()),
    deps.review.onDidChangeLayout(() => updateContext()),
    deps.proposals.onDidChangeLayout(() => updateContext()),
    { dispose: model.onDidChange(() => updateContext()) },
  );
  updateContext();
}
