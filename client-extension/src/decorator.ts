// Paints open hunks into visible editors: old lines (background, gutter, overview ruler) and the
// proposed text as ghost text after them (multi-line proposals are blocks of lines: inlineBlocks.ts), and a
// warning on applied hunks whose text is no longer in the file.
import * as vscode from 'vscode';
import { DecorationKind, inlineStyle, marksFor } from './logic/decorations';
import { HunkModel } from './logic/model';

export class Decorator implements vscode.Disposable {
  private readonly lineTypes: Record<DecorationKind, vscode.TextEditorDecorationType>;
  private readonly covered: vscode.TextEditorDecorationType;
  private readonly removed: vscode.TextEditorDecorationType;
  private readonly ghost: vscode.TextEditorDecorationType;
  private readonly missing: vscode.TextEditorDecorationType;
  private readonly kept: vscode.TextEditorDecorationType;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly model: HunkModel, media: vscode.Uri) {
    const line = (bg: string, gutter: string, ruler: string) =>
      vscode.window.createTextEditorDecorationType({
        isWholeLine: true,
        backgroundColor: new vscode.ThemeColor(bg),
        gutterIconPath: vscode.Uri.joinPath(media, gutter),
        gutterIconSize: 'contain',
        overviewRulerColor: new vscode.ThemeColor(ruler),
        overviewRulerLane: vscode.OverviewRulerLane.Left,
        rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
      });
    this.lineTypes = {
      pending: line('stet.oldLineBackground', 'gutter-pending.svg', 'editorOverviewRuler.modifiedForeground'),
      accepted: line('stet.oldLineBackground', 'gutter-accepted.svg', 'editorOverviewRuler.addedForeground'),
      stale: line('stet.staleLineBackground', 'gutter-stale.svg', 'editorOverviewRuler.warningForeground'),
    };
    // A stale hunk sharing lines with an open one: only its gutter and ruler mark (logic/decorations.ts).
    this.covered = vscode.window.createTextEditorDecorationType({
      gutterIconPath: vscode.Uri.joinPath(media, 'gutter-stale.svg'),
      gutterIconSize: 'contain',
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.warningForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Right,
    });
    this.removed = vscode.window.createTextEditorDecorationType({ textDecoration: 'line-through', opacity: '0.7' });
    this.ghost = vscode.window.createTextEditorDecorationType({
      after: {
        backgroundColor: new vscode.ThemeColor('stet.proposedTextBackground'),
        fontStyle: 'italic',
      },
      before: {
        backgroundColor: new vscode.ThemeColor('stet.proposedTextBackground'),
        fontStyle: 'italic',
      },
    });
    this.missing = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('stet.missingLineBackground'),
      gutterIconPath: vscode.Uri.joinPath(media, 'gutter-stale.svg'),
      gutterIconSize: 'contain',
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.warningForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    });
    // A kept capture: the agent's new lines are in the file already; they are marked as its change.
    this.kept = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('stet.proposedTextBackground'),
      gutterIconPath: vscode.Uri.joinPath(media, 'gutter-pending.svg'),
      gutterIconSize: 'contain',
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
      after: { fontStyle: 'italic', color: new vscode.ThemeColor('editorCodeLens.foreground') },
    });
    this.subscriptions.push(
      { dispose: model.onDidChange(() => this.renderAll()) },
      vscode.window.onDidChangeVisibleTextEditors(() => this.renderAll()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('stet.inlineProposal') && this.renderAll()),
    );
  }

  renderAll(): void {
    for (const editor of vscode.window.visibleTextEditors) this.render(editor);
  }

  render(editor: vscode.TextEditor): void {
    if (editor.document.uri.scheme !== 'file') return;
    const style = inlineStyle(vscode.workspace.getConfiguration('stet').get('inlineProposal'));
    const hunks = this.model.forUri(editor.document.uri.toString());
    const marks = marksFor(hunks, style);
    const lastLine = editor.document.lineCount - 1;
    const lineRange = (l: number) => editor.document.lineAt(Math.min(l, lastLine)).range;
    for (const kind of Object.keys(this.lineTypes) as DecorationKind[]) {
      editor.setDecorations(this.lineTypes[kind], marks.lines.filter((m) => m.kind === kind && !m.covered).map((m) => lineRange(m.line)));
    }
    editor.setDecorations(this.covered, marks.lines.filter((m) => m.covered).map((m) => lineRange(m.line)));
    editor.setDecorations(this.removed, marks.lines.filter((m) => m.removed).map((m) => lineRange(m.line)));
    const ghosts: vscode.DecorationOptions[] = [];
    for (const m of marks.lines) {
      if (m.ghost === undefined) continue;
      const r = lineRange(m.line);
      ghosts.push({ range: new vscode.Range(r.end, r.end), renderOptions: { after: { contentText: m.ghost } } });
    }
    for (const m of marks.inserts) {
      const r = lineRange(m.line);
      const at = m.before ? r.start : r.end;
      ghosts.push({
        range: new vscode.Range(at, at),
        renderOptions: m.before ? { before: { contentText: m.ghost } } : { after: { contentText: m.ghost } },
      });
    }
    editor.setDecorations(this.ghost, ghosts);
    const missing: vscode.DecorationOptions[] = [];
    for (const m of marks.missing) {
      const hover = new vscode.MarkdownString(undefined, true);
      const arg = encodeURIComponent(JSON.stringify([{ hunkId: m.hunkId }]));
      hover.appendMarkdown('$(warning) **Stet:** this hunk was accepted and applied, but its text is no longer in the file ');
      hover.appendMarkdown('(a checkout, an undo or another tool removed it).\n\n');
      hover.appendMarkdown(`[Re-apply](command:stet.reapplyHunk?${arg}) · [Undo decision](command:stet.undoHunk?${arg}) (back to pending)`);
      hover.isTrusted = { enabledCommands: ['stet.reapplyHunk', 'stet.undoHunk'] };
      missing.push({ range: lineRange(m.line), hoverMessage: hover });
    }
    editor.setDecorations(this.missing, missing);
    editor.setDecorations(this.kept, marks.kept.map((m) => {
      const r = lineRange(m.line);
      return m.ghost === undefined ? { range: r } : { range: r, renderOptions: { after: { contentText: m.ghost } } };
    }));
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    for (const t of [...Object.values(this.lineTypes), this.covered, this.removed, this.ghost, this.missing, this.kept]) t.dispose();
  }
}
