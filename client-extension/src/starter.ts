// When the server runs: at once where a folder has .stet/ (or always, by setting), else as soon as a .stet
// folder appears (an agent's first proposal). Changing the server settings restarts it.
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { StetClient } from './client';
import { shouldStart } from './logic/autostart';

export class ServerStarter implements vscode.Disposable {
  /** No .stet folder yet (stet.server.start = auto): no server, no status item. */
  waitingForStore = false;
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when waitingForStore may have changed. */
  readonly onDidChange = this.changed.event;
  private readonly storeWatchers: vscode.Disposable[] = [];
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly client: StetClient, private readonly output: vscode.OutputChannel) {
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '{.stet,.stet/*}'));
      watcher.onDidCreate(() => { if (this.waitingForStore) void this.startIfWanted(false); });
      this.storeWatchers.push(watcher);
    }
    this.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('stet.server')) void this.startIfWanted(true);
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.startIfWanted(false)),
    );
  }

  private hasStore(): boolean[] {
    return (vscode.workspace.workspaceFolders ?? [])
      .map((f) => f.uri.scheme === 'file' && fs.existsSync(path.join(f.uri.fsPath, '.stet')));
  }

  async startIfWanted(restart: boolean): Promise<void> {
    const cfg = vscode.workspace.getConfiguration('stet.server');
    const db = cfg.get('db');
    if (!shouldStart(cfg.get('start'), this.hasStore(), typeof db === 'string' && db.trim() !== '')) {
      this.waitingForStore = true;
      await this.client.stop();
      this.output.appendLine('[stet] no .stet folder in this workspace: the server starts when one appears');
      this.changed.fire();
      return;
    }
    const wasWaiting = this.waitingForStore;
    this.waitingForStore = false;
    for (const w of this.storeWatchers.splice(0)) w.dispose();
    if (restart || wasWaiting || this.client.status === 'stopped') await this.client.restart();
    this.changed.fire();
  }

  /** Start / Restart Server: whatever the folder holds. */
  async restart(): Promise<void> {
    this.waitingForStore = false;
    await this.client.restart();
    this.changed.fire();
  }

  dispose(): void {
    for (const d of [...this.storeWatchers.splice(0), ...this.subscriptions.splice(0)]) d.dispose();
    this.changed.dispose();
  }
}
