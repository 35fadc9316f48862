// The side-by-side diff against the proposal, and the "Diff" / "Edit…" lenses that open it (or the editor
// for accepting with changes) beside the server's Accept / Reject lenses.
import * as vscode from 'vscode';
import { Deps, target } from '../deps';
import { PROPOSAL_SCHEME, ProposalContent, showDiff } from '../diff';
import { isOpen } from '../logic/hunk';

export function register(ctx: vscode.ExtensionContext, deps: Deps): void {
  const { model } = deps;
  const content = new ProposalContent(model);

  const lensChanged = new vscode.EventEmitter<void>();
  const lenses: vscode.CodeLensProvider = {
    onDidChangeCodeLenses: lensChanged.event,
    provideCodeLenses(doc) {
      return model.forUri(doc.uri.toString()).filter((h) => isOpen(h) && h.kind === 'edit').flatMap((h) => {
        const line = Math.min(h.range.start.line, doc.lineCount - 1);
        const range = new vscode.Range(line, 0, line, 0);
        const out = [new vscode.CodeLens(range, { title: 'Diff', command: 'stet.showDiff', arguments: [{ hunkId: h.id }] })];
        if (h.status === 'pending') {
          out.push(new vscode.CodeLens(range, { title: 'Edit…', tooltip: 'Edit the proposed text, then accept it', command: 'stet.acceptWithChanges', arguments: [{ hunkId: h.id }] }));
        }
        return out;
      });
    },
  };

  ctx.subscriptions.push(
    content, lensChanged,
    { dispose: model.onDidChange(() => lensChanged.fire()) },
    vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, content),
    vscode.languages.registerCodeLensProvider({ scheme: 'file' }, lenses),
    vscode.commands.registerCommand('stet.showDiff', (arg: unknown) => {
      const h = target(model, arg);
      if (h) return showDiff(model, h.uri, h);
      const ed = vscode.window.activeTextEditor;
      if (ed && model.forUri(ed.document.uri.toString()).some(isOpen)) return showDiff(model, ed.document.uri.toString());
      return vscode.window.showInformationMessage('Stet: no open hunk here to diff.');
    }),
  );
}
