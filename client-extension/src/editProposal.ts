// "Accept with changes": the hunk's proposed text opens as an editable document, between a few lines of
// the file around it (context, dimmed) so it reads in its place. Saving accepts the hunk with the
// developer's text — what lies between the context — (stet.accept with `text`). A tiny in-memory file
// system backs the document.
import * as path from 'path';
import * as vscode from 'vscode';
import { EditDocument, editDocument, editedText } from './logic/editContext';
import { errorText } from './logic/errors';
import { HunkState } from './logic/hunk';
import { matchesOldText } from './logic/text';

export const EDIT_SCHEME = 'stet-edit';

type Accept = (hunk: HunkState, text: string) => Promise<void>;

interface EditFile { hunk: HunkState; doc: EditDocument; data: Uint8Array; mtime: number }

export class ProposalEditor implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly files = new Map<string, EditFile>();
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  private readonly context = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    opacity: '0.55',
    backgroundColor: new vscode.ThemeColor('editor.inactiveSelectionBackground'),
  });
  private readonly proposed = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('stet.proposedTextBackground'),
  });
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly accept: Accept) {
    this.subscriptions.push(
      vscode.window.onDidChangeVisibleTextEditors((eds) => eds.forEach((e) => this.decorate(e))),
      vscode.workspace.onDidChangeTextDocument((e) => {
        for (const ed of vscode.window.visibleTextEditors) if (ed.document === e.document) this.decorate(ed);
      }),
    );
  }

  /** Opens the hunk's proposed text, with `contextLines` of the file around it, beside the file; Ctrl+S accepts. */
  async open(hunk: HunkState, fileText: string | undefined, contextLines: number): Promise<void> {
    const name = path.posix.basename(vscode.Uri.parse(hunk.uri).path);
    const uri = vscode.Uri.from({ scheme: EDIT_SCHEME, path: `/${hunk.id}/${name}` });
    // Context only where the file still reads as the hunk expects (else the lines around would be wrong).
    const base = fileText !== undefined && matchesOldText(fileText, hunk) ? fileText : undefined;
    const doc = base !== undefined ? editDocument(base, hunk, contextLines) : editDocument('', { ...hunk, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } }, 0);
    this.files.set(uri.toString(), { hunk, doc, data: Buffer.from(doc.text, 'utf8'), mtime: Date.now() });
    const textDoc = await vscode.workspace.openTextDocument(uri);
    // The cursor on the first proposed line from the start: set afterwards, it moved there only after the
    // editor had appeared (150 ms later here), and keys typed meanwhile landed on line 1.
    const pos = new vscode.Position(Math.min(doc.beforeLines, textDoc.lineCount - 1), 0);
    const editor = await vscode.window.showTextDocument(textDoc, {
      viewColumn: vscode.ViewColumn.Beside, preview: false, selection: new vscode.Range(pos, pos),
    });
    this.decorate(editor);
    editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    const around = doc.beforeLines || doc.afterLines ? ' The dimmed lines around it are the file as it is: leave them as they are.' : '';
    void vscode.window.showInformationMessage(`Stet: edit the proposed text, then save (Ctrl+S) to accept it with your changes.${around} Close without saving to cancel.`);
  }

  /** Dims the context lines of an edit document (they are recomputed as the developer types). */
  private decorate(editor: vscode.TextEditor): void {
    const f = this.files.get(editor.document.uri.toString());
    if (!f) return;
    const count = editor.document.lineCount;
    const lastLine = count - 1;
    // Context sits at the top and the bottom; an empty last line after a final newline is not context.
    const endsWithNewline = count > 1 && editor.document.lineAt(lastLine).text === '';
    const bottomFirst = Math.max(f.doc.beforeLines, lastLine - (endsWithNewline ? 1 : 0) - f.doc.afterLines + 1);
    const ctx: vscode.Range[] = [];
    for (let l = 0; l < Math.min(f.doc.beforeLines, count); l++) ctx.push(editor.document.lineAt(l).range);
    for (let l = bottomFirst; l <= lastLine - (endsWithNewline ? 1 : 0) && f.doc.afterLines > 0; l++) ctx.push(editor.document.lineAt(l).range);
    const proposed: vscode.Range[] = [];
    for (let l = f.doc.beforeLines; l < bottomFirst && l <= lastLine; l++) proposed.push(editor.document.lineAt(l).range);
    editor.setDecorations(this.context, ctx);
    editor.setDecorations(this.proposed, proposed);
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
    const text = editedText(Buffer.from(content).toString('utf8'), f.doc);
    if (text === undefined) {
      throw vscode.FileSystemError.NoPermissions(
        `Stet: only the proposed lines can change; the ${f.doc.beforeLines} line(s) above and ${f.doc.afterLines} below are the file as it is — put them back as they were.`);
    }
    try {
      await this.accept(f.hunk, text);
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

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.context.dispose();
    this.proposed.dispose();
    this.emitter.dispose();
  }
}
