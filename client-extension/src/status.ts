// The status bar item, the view's badge and the context keys that enable keybindings.
import * as vscode from 'vscode';
import { StetClient } from './client';
import { isOpen } from './logic/hunk';
import { HunkModel } from './logic/model';
import { ServerStarter } from './starter';

export class StatusView implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('stet.status', vscode.StatusBarAlignment.Left, 10);
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly model: HunkModel,
    private readonly client: StetClient,
    private readonly starter: ServerStarter,
    private readonly treeView: vscode.TreeView<unknown>,
  ) {
    this.item.name = 'Stet';
    this.subscriptions.push(
      { dispose: model.onDidChange(() => this.update()) },
      client.onStatus(() => this.update()),
      starter.onDidChange(() => this.update()),
      vscode.window.onDidChangeActiveTextEditor(() => this.updateEditorContext()),
    );
    this.update();
  }

  update(): void {
    const { item, model, client } = this;
    const counts = model.counts();
    const open = model.openCount();
    const waiting = this.starter.waitingForStore;
    if (waiting) {
      item.hide(); // a window without Stet: nothing to show
    } else if (client.status === 'stopped') {
      item.text = '$(error) Stet';
      item.tooltip = 'Stet: the review server is not running — click to restart it';
      item.command = 'stet.restartServer';
    } else if (client.status === 'starting') {
      item.text = '$(sync~spin) Stet';
      item.tooltip = 'Stet: starting the review server';
      item.command = 'stet.showOutput';
    } else {
      item.text = `$(checklist) ${counts.pending} pending`;
      item.tooltip = `Stet: ${counts.pending} pending, ${counts.accepted} accepted, ${counts.stale} stale — click for the next hunk`;
      item.command = 'stet.nextHunk';
    }
    if (!waiting) item.show();
    this.treeView.badge = counts.pending ? { value: counts.pending, tooltip: `${counts.pending} pending` } : undefined;
    void vscode.commands.executeCommand('setContext', 'stet.hasOpenHunks', open > 0);
    this.updateEditorContext();
  }

  private updateEditorContext(): void {
    const ed = vscode.window.activeTextEditor;
    const hunks = ed ? this.model.forUri(ed.document.uri.toString()) : [];
    // Keys are bound per file, not per cursor line: a context key updated on every cursor move
    // lags behind a fast keystroke. The command itself finds the hunk at the cursor.
    void vscode.commands.executeCommand('setContext', 'stet.fileHasOpenHunks', hunks.some(isOpen));
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}
