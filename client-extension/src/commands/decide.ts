// Deciding one hunk: accept, reject (with feedback), accept with the developer's changes, undo, re-apply
// (an applied hunk whose text was removed from the file since).
import * as vscode from 'vscode';
import { Deps, describe, requireHunk, run, target } from '../deps';
import { errorText } from '../logic/errors';
import { HunkState, isMissing } from '../logic/hunk';
import { currentText } from '../review';

export function register(ctx: vscode.ExtensionContext, deps: Deps): void {
  const { model, client } = deps;

  /** Sends one decision; a proposal block in the file is taken down first and back if it fails. */
  const decide = async (command: 'stet.accept' | 'stet.reject', h: HunkState, params: Record<string, unknown>) => {
    deps.blocks.hide(h.id);
    try {
      await client.command(command, params);
    } catch (e) {
      deps.blocks.restore(h.id);
      void vscode.window.showErrorMessage(`Stet: could not ${command === 'stet.accept' ? 'accept' : 'reject'}: ${errorText(e)}`);
    }
  };

  const accept = (arg: unknown) => {
    const h = requireHunk(deps, arg);
    if (h) return decide('stet.accept', h, { hunkIds: [h.id], expectedVersions: { [h.id]: h.version } });
  };

  const reject = async (arg: unknown) => {
    const h = requireHunk(deps, arg);
    if (!h) return;
    const feedback = await deps.askRejectFeedback([h.id]);
    if (feedback === undefined) return;
    const params: Record<string, unknown> = { hunkIds: [h.id], expectedVersions: { [h.id]: h.version } };
    if (feedback) params.feedback = feedback;
    return decide('stet.reject', h, params);
  };

  ctx.subscriptions.push(
    vscode.commands.registerCommand('stet.acceptAtCursor', accept),
    vscode.commands.registerCommand('stet.acceptHunk', accept),
    vscode.commands.registerCommand('stet.rejectAtCursor', reject),
    vscode.commands.registerCommand('stet.rejectHunk', reject),
    vscode.commands.registerCommand('stet.acceptWithChanges', async (arg: unknown) => {
      const h = requireHunk(deps, arg);
      if (!h) return;
      const lines = vscode.workspace.getConfiguration('stet').get<number>('editContextLines', 3);
      await deps.editor.open(h, h.kind === 'edit' ? await currentText(h.uri) : undefined, lines);
    }),
    vscode.commands.registerCommand('stet.undoHunk', (arg: unknown) => {
      const h = target(deps, arg);
      if (h) return run('undo', () => client.command('stet.undo', { hunkIds: [h.id] }));
    }),
    vscode.commands.registerCommand('stet.reapplyHunk', async (arg: unknown) => {
      const h = target(deps, arg);
      if (!h || !isMissing(h)) return vscode.window.showInformationMessage('Stet: no applied hunk that left the file here.');
      try {
        await client.command('stet.reapply', { hunkIds: [h.id] });
      } catch (e) {
        void vscode.window.showErrorMessage(`Stet: could not re-apply ${describe(h)}: ${errorText(e)} (re-applying needs a server with stet.reapply).`);
      }
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
