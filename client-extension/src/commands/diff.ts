// The side-by-side diff against the proposal, and the "Diff" / "Edit…" lenses that open it (or the editor
// for accepting with changes) beside the server's Accept / Reject lenses; "Re-apply" / "Undo decision" on
// an applied hunk whose text left the file.
import * as vscode from 'vscode';
import { Deps, target } from '../deps';
import { PROPOSAL_SCHEME, showDiff } from '../diff';
import { isMissing, isOpen } from '../logic/hunk';
import { rowNames } from '../logic/parts';

export function register(ctx: vscode.ExtensionContext, deps: Deps): void {
  const { model } = deps;
  const content = deps.proposals;

  const lensChanged = new vscode.EventEmitter<void>();
  const lenses: vscode.CodeLensProvider = {
    onDidChangeCodeLenses: lensChanged.event,
    provideCodeLenses(doc) {
      const hunks = model.forUri(doc.uri.toString());
      const missing = hunks.filter(isMissing).flatMap((h) => {
        const line = Math.min(h.range.start.line, doc.lineCount - 1);
        const range = new vscode.Range(line, 0, line, 0);
        const arg = { hunkId: h.id };
        return [
          new vscode.CodeLens(range, { title: '$(warning) Accepted, no longer in the file:', command: '' }),
          new vscode.CodeLens(range, { title: 'Re-apply', tooltip: 'Put the accepted text back', command: 'stet.reapplyHunk', arguments: [arg] }),
          new vscode.CodeLens(range, { title: 'Undo decision', tooltip: 'Back to pending (the file stays as it is)', command: 'stet.undoHunk', arguments: [arg] }),
        ];
      });
      // Hunks starting on one line share a row of lenses: each button names its hunk, as the server's do.
      const names = rowNames(hunks);
      return missing.concat(hunks.filter((h) => isOpen(h) && h.kind === 'edit').flatMap((h) => {
        const line = Math.min(h.range.start.line, doc.lineCount - 1);
        const range = new vscode.Range(line, 0, line, 0);
        const n = names.has(h.id) ? ` ${names.get(h.id)}` : '';
        const out = [new vscode.CodeLens(range, { title: `Diff${n}`, command: 'stet.showDiff', arguments: [{ hunkId: h.id }] })];
        if (h.status === 'pending') {
          out.push(new vscode.CodeLens(range, { title: `Edit${n}…`, tooltip: 'Edit the proposed text, then accept it', command: 'stet.acceptWithChanges', arguments: [{ hunkId: h.id }] }));
        }
        return out;
      }));
    },
  };

  ctx.subscriptions.push(
    lensChanged,
    { dispose: model.onDidChange(() => lensChanged.fire()) },
    deps.onRefreshLenses(() => lensChanged.fire()),
    vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, content),
    vscode.languages.registerCodeLensProvider({ scheme: 'file' }, lenses),
    vscode.commands.registerCommand('stet.showDiff', (arg: unknown) => {
      const h = target(deps, arg);
      if (h) return showDiff(model, h.uri, h);
      const ed = vscode.window.activeTextEditor;
      if (ed && model.forUri(ed.document.uri.toString()).some(isOpen)) return showDiff(model, ed.document.uri.toString());
      return vscode.window.showInformationMessage('Stet: no open hunk here to diff.');
    }),
  );
}
