// The status bar item, the view's badge and the context keys that enable keybindings; and the "new
// proposal" pulse of the status item.
import * as vscode from 'vscode';
import { StetClient } from './client';
import { isMissing, isOpen } from './logic/hunk';
import { HunkModel } from './logic/model';
import { parseReviewUri } from './review';
import { ServerStarter } from './starter';

const PULSE_MS = 6000;

export class StatusView implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('stet.status', vscode.StatusBarAlignment.Left, 10);
  private readonly subscriptions: vscode.Disposable[] = [];
  private pulseUntil = 0;
  private pulseTimer: ReturnType<typeof setTimeout> | undefined;
  private pulseNote = '';

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

  /** Draws attention to the item for a few seconds (a new proposal arrived): `note` goes in its tooltip. */
  pulse(note: string): void {
    this.pulseUntil = Date.now() + PULSE_MS;
    this.pulseNote = note;
    if (this.pulseTimer) clearTimeout(this.pulseTimer);
    this.pulseTimer = setTimeout(() => { this.pulseTimer = undefined; this.update(); }, PULSE_MS + 50);
    this.update();
  }

  update(): void {
    const { item, model, client } = this;
    const counts = model.counts();
    const open = model.openCount();
    const missing = model.all().filter(isMissing).length;
    const waiting = this.starter.waitingForStore;
    const pulsing = Date.now() < this.pulseUntil;
    item.backgroundColor = undefined;
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
      const icon = pulsing ? '$(bell-dot)' : missing ? '$(warning)' : '$(checklist)';
      item.text = `${icon} ${counts.pending} pending` + (missing ? ` · ${missing} not in file` : '');
      item.tooltip = `Stet: ${counts.pending} pending, ${counts.accepted} accepted, ${counts.stale} stale` +
        (missing ? `, ${missing} applied but no longer in the file` : '') +
        (pulsing ? `\n${this.pulseNote} — click to review it` : ' — click for the next hunk');
      item.command = pulsing ? 'stet.reviewLatestProposal' : 'stet.nextHunk';
      if (pulsing) item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    }
    if (!waiting) item.show();
    this.treeView.badge = counts.pending ? { value: counts.pending, tooltip: `${counts.pending} pending` } : undefined;
    this.treeView.description = counts.pending ? `${counts.pending} pending` : undefined;
    void vscode.commands.executeCommand('setContext', 'stet.hasOpenHunks', open > 0);
    void vscode.commands.executeCommand('setContext', 'stet.hasPendingHunks', counts.pending > 0);
    this.updateEditorContext();
  }

  private updateEditorContext(): void {
    const ed = vscode.window.activeTextEditor;
    // A review document stands for its file.
    const uri = ed ? (parseReviewUri(ed.document.uri)?.uri ?? ed.document.uri.toString()) : undefined;
    const hunks = uri ? this.model.forUri(uri) : [];
    // Keys are bound per file, not per cursor line: a context key updated on every cursor move
    // lags behind a fast keystroke. The command itself finds the hunk at the cursor.
    void vscode.commands.executeCommand('setContext', 'stet.fileHasOpenHunks', hunks.some(isOpen));
  }

  dispose(): void {
    if (this.pulseTimer) clearTimeout(this.pulseTimer);
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}
