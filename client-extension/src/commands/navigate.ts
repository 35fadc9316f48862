// Moving between hunks: next / previous across files, reveal one (tree clicks), and the jump offered by
// the "Restored review" notification.
import * as vscode from 'vscode';
import { RestoredParams } from '../client';
import { Deps, cursor, reveal, target } from '../deps';
import { firstPending, nextHunk, previousHunk } from '../logic/navigation';
import { restoredMessage } from '../logic/settings';

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

  ctx.subscriptions.push(
    client.onRestored(onRestored),
    vscode.commands.registerCommand('stet.nextHunk', () => reveal(model, nextHunk(model.all(), cursor()))),
    vscode.commands.registerCommand('stet.previousHunk', () => reveal(model, previousHunk(model.all(), cursor()))),
    vscode.commands.registerCommand('stet.revealHunk', (arg: unknown) => reveal(model, target(model, arg))),
  );
}
