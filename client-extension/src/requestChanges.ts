// `stet.requestChanges` changed: each workspace folder that is a git checkout gets it in its git
// config (logic/requestChanges.ts); a failure is a warning, never thrown.
import { execFile } from 'child_process';
import * as vscode from 'vscode';
import { gitConfigDone, requestChangesGitArgs } from './logic/requestChanges';

function git(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile('git', args, { timeout: 10_000 }, (err, _stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stderr: String(stderr || (err?.message ?? '')).trim() });
    });
  });
}

export class RequestChangesSetting implements vscode.Disposable {
  private readonly subscription: vscode.Disposable;

  constructor(private readonly output: vscode.OutputChannel) {
    this.subscription = vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('stet.requestChanges')) void this.apply();
    });
  }

  /** Write (or unset) the setting in each folder that is a git checkout. */
  async apply(): Promise<void> {
    const value = vscode.workspace.getConfiguration('stet').get('requestChanges');
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      if (folder.uri.scheme !== 'file') continue;
      const dir = folder.uri.fsPath;
      try {
        if ((await git(['-C', dir, 'rev-parse', '--is-inside-work-tree'])).code !== 0) continue; // not a checkout
        const args = requestChangesGitArgs(value, dir);
        const done = await git(args);
        if (gitConfigDone(args, done.code)) {
          this.output.appendLine(`[stet] git ${args.join(' ')}`);
        } else {
          void vscode.window.showWarningMessage(`Stet: could not set request changes in ${dir}: ${done.stderr || `git exit code ${done.code}`}`);
        }
      } catch (e) {
        void vscode.window.showWarningMessage(`Stet: could not set request changes in ${dir}: ${String(e)}`);
      }
    }
  }

  dispose(): void {
    this.subscription.dispose();
  }
}
