// "Accept with changes": the hunk's proposed text opens as an editable document; saving it accepts the
// hunk with the developer's text (stet.accept with `text`). A tiny in-memory file system backs it.
import * as path from 'path';
import * as vscode from 'vscode';
import { errorText } from './logic/errors';
import { HunkState } from './logic/hunk';

export const EDIT_SCHEME = 'stet-edit';

type Accept = (hunk: HunkState, text: string) => Promise<void>;

export class ProposalEditor implements vscode.FileSystemProvider {
  private readonly files = new Map<string, { hunk: HunkState; data: Uint8Array; mtime: number }>();
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;

  constructor(private readonly accept: Accept) {}

  /** Opens the hunk's proposed text beside the file; Ctrl+S accepts it. */
  async open(hunk: HunkState): Promise<void> {
    const name = path.posix.basename(vscode.Uri.parse(hunk.uri).path);
    const uri = vscode.Uri.from({ scheme: EDIT_SCHEME, path: `/${hunk.id}/${name}` });
    this.files.set(uri.toString(), { hunk, data: Buffer.from(hunk.newText, 'utf8'), mtime: Date.now() });
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: false });
    void vscode.window.showInformationMessage('Stet: edit the proposed text, then save (Ctrl+S) to accept it with your changes. Close without saving to cancel.');
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const f = this.files.get(uri.toString());
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: f.mtime, mtime: f.mtime, size: f.data.byteLength };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const f = this.files.get(uri.toString());
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return f.data;
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const f = this.files.get(uri.toString());
    if (!f) throw vscode.FileSystemError.NoPermissions('only proposals opened by Stet can be saved here');
    try {
      await this.accept(f.hunk, Buffer.from(content).toString('utf8'));
    } catch (e) {
      // VS Code shows this as the save error and keeps the edits.
      throw vscode.FileSystemError.Unavailable(`Stet could not accept: ${errorText(e)}`);
    }
    f.data = content;
    f.mtime = Date.now();
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    // Close the tab once VS Code has marked the save done (closing earlier asks "save changes?").
    const saved = vscode.workspace.onDidSaveTextDocument((doc) => {
      if (doc.uri.toString() !== uri.toString()) return;
      saved.dispose();
      void this.close(uri);
    });
    setTimeout(() => { saved.dispose(); }, 10_000);
  }

  private async close(uri: vscode.Uri) {
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        if (tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === uri.toString()) {
          await vscode.window.tabGroups.close(tab);
        }
      }
    }
    this.files.delete(uri.toString());
  }

  watch(): vscode.Disposable { return new vscode.Disposable(() => undefined); }
  readDirectory(): [string, vscode.FileType][] { return []; }
  createDirectory(): void { throw vscode.FileSystemError.NoPermissions('read-only'); }
  delete(): void { throw vscode.FileSystemError.NoPermissions('read-only'); }
  rename(): void { throw vscode.FileSystemError.NoPermissions('read-only'); }
}
