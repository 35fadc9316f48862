// Moving between hunks: next / previous across files, reveal one (tree clicks), on to the next pending
// hunk after a decision, and the jump offered by the "Restored review" notification.
import * as vscode from 'vscode';
import { Decision, RestoredParams } from '../client';
import { Deps, cursor, reveal, target } from '../deps';
import { EDIT_SCHEME } from '../editProposal';
import { firstPending, nextHunk, nextPendingAfter, previousHunk } from '../logic/navigation';
import { restoredMessage } from '../logic/settings';
import { REVIEW_SCHEME, isReviewActive } from '../review';

/** Resolves when the model next changes for `uri` (the server re-anchors the other hunks), or after `ms`. */
function settled(deps: Deps, uri: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    const unsubscribe = deps.model.onDidChange((uris, full) => { if (full || uris.includes(uri)) done(); });
    function done() { clearTimeout(timer); unsubscribe(); resolve(); }
  });
}

export function register(ctx: vscode.ExtensionContext, deps: Deps): void {
  const { model, client, output } = deps;

  const onRestored = (p: RestoredParams) => {
    if (p.error) {
      // The store could not be opened: the server says why and what to do.
      void vscode.window.showErrorMessage(`Stet: ${p.error}`, 'Show Log').then((pick) => pick && output.show());
      return;
    }
    const c = p.counts ?? {};
    if (!(c.pending || c.accepted || c.stale)) return; // nothing to review: stay quiet
    void vscode.window.showInformationMessage(restoredMessage(c), 'Go to First Pending').then((pick) => {
      if (pick) void reveal(model, firstPending(model.all()) ?? nextHunk(model.all(), undefined));
    });
  };

  // After accepting or rejecting one hunk in a file (lens, key, block button, tree), go on to the next
  // pending one. Inside a review the decided hunk leaves the diff and the next is right there: stay.
  const onDecided = async (d: Decision) => {
    await moveOn(d);
    // Whether or not the cursor moved: once the editor is in front again, its lenses follow the decision.
    setTimeout(() => deps.refreshLenses(), 150);
  };

  const moveOn = async (d: Decision) => {
    if (d.hunkIds.length !== 1 || !vscode.workspace.getConfiguration('stet').get<boolean>('moveToNextHunk', true)) return;
    const editor = vscode.window.activeTextEditor;
    const scheme = editor?.document.uri.scheme;
    if (scheme === REVIEW_SCHEME || scheme === EDIT_SCHEME || isReviewActive()) return;
    const decided = d.hunks.find((h) => h.id === d.hunkIds[0]);
    if (!decided || (decided.status !== 'applied' && decided.status !== 'accepted' && decided.status !== 'rejected')) return;
    const next = nextPendingAfter(model.all(), d.hunkIds, { uri: decided.uri, line: decided.range.start.line });
    if (!next) {
      vscode.window.setStatusBarMessage('Stet: nothing left to review', 4000);
      return;
    }
    // An accepted edit moves the lines below it: wait (briefly) for the server's re-anchored ranges.
    if (next.uri === decided.uri && decided.status !== 'rejected') {
      const before = editor?.document.uri.toString();
      await settled(deps, decided.uri, 400);
      // The developer went to another editor meanwhile: do not pull them back.
      if (vscode.window.activeTextEditor?.document.uri.toString() !== before) return;
    }
    await reveal(model, model.get(next.id) ?? next);
  };

  ctx.subscriptions.push(
    client.onRestored(onRestored),
    client.onDidDecide((d) => void onDecided(d)),
    vscode.commands.registerCommand('stet.nextHunk', () => reveal(model, nextHunk(model.all(), cursor()))),
    vscode.commands.registerCommand('stet.previousHunk', () => reveal(model, previousHunk(model.all(), cursor()))),
    vscode.commands.registerCommand('stet.revealHunk', (arg: unknown) => reveal(model, target(deps, arg))),
  );
}
