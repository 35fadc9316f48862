// Deciding one hunk: accept, reject (with feedback), accept with the developer's changes, undo.
import * as vscode from 'vscode';
import { Deps, describe, requireHunk, run, target } from '../deps';

export function register(ctx: vscode.ExtensionContext, deps: Deps): void {
  const { model, client } = deps;

  const accept = (arg: unknown) => {
    const h = requireHunk(model, arg);
    if (h) return run('accept', () => client.command('stet.accept', { hunkIds: [h.id], expectedVersions: { [h.id]: h.version } }));
  };

  const reject = async (arg: unknown) => {
    const h = requireHunk(model, arg);
    if (!h) return;
    const feedback = await deps.askRejectFeedback([h.id]);
    if (feedback === undefined) return;
    const params: Record<string, unknown> = { hunkIds: [h.id], expectedVersions: { [h.id]: h.version } };
    if (feedback) params.feedback = feedback;
    return run('reject', () => client.command('stet.reject', params));
  };

  ctx.subscriptions.push(
    vscode.commands.registerCommand('stet.acceptAtCursor', accept),
    vscode.commands.registerCommand('stet.acceptHunk', accept),
    vscode.commands.registerCommand('stet.rejectAtCursor', reject),
    vscode.commands.registerCommand('stet.rejectHunk', reject),
    vscode.commands.registerCommand('stet.acceptWithChanges', async (arg: unknown) => {
      const h = requireHunk(model, arg);
      if (h) await deps.editor.open(h);
    }),
    vscode.commands.registerCommand('stet.undoHunk', (arg: unknown) => {
      const h = target(model, arg);
      if (h) return run('undo', () => client.command('stet.undo', { hunkIds: [h.id] }));
    }),
    vscode.commands.registerCommand('stet.undoLast', () => {
      const decided = model.all().filter((h) => h.decidedAt && ['accepted', 'applied', 'rejected'].includes(h.status));
      decided.sort((a, b) => (a.decidedAt! < b.decidedAt! ? 1 : -1));
      const h = decided[0];
      if (!h) return vscode.window.showInformationMessage('Stet: no decision to undo.');
      return run('undo', async () => {
        await client.command('stet.undo', { hunkIds: [h.id] });
        void vscode.window.showInformationMessage(`Stet: undid the decision on ${describe(h)} (it was ${h.status}); it is pending again.`);
      });
    }),
  );
}
