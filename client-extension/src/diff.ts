// The side-by-side diff: the file against a read-only virtual document with the proposal applied.
import * as path from 'path';
import * as vscode from 'vscode';
import { HunkState, isOpen, lineLabel } from './logic/hunk';
import { HunkModel } from './logic/model';
import { layoutProposal } from './logic/review';
import { applyHunks } from './logic/text';

export const PROPOSAL_SCHEME = 'stet-proposal';

interface Query { uri: string; hunk?: string; side: 'base' | 'proposal' }

function proposalUri(q: Query): vscode.Uri {
  const file = vscode.Uri.parse(q.uri);
  // The path keeps the file name (tab title, language detection); the query says what to show.
  return vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: file.path, query: JSON.stringify(q) });
}

export class ProposalContent implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly open = new Set<string>();
  private readonly unsubscribe: () => void;
  private readonly layoutChanged = new vscode.EventEmitter<void>();
  /** Fires after a proposal side was recomputed. */
  readonly onDidChangeLayout = this.layoutChanged.event;
  /** Where each hunk's new lines are in a proposal side, by its uri (for a selection there). */
  private readonly spans = new Map<string, { hunk: HunkState; line: number }[]>();

  constructor(private readonly model: HunkModel) {
    // Keep open diffs in step with the server's hunks.
    this.unsubscribe = model.onDidChange(() => {
      for (const u of this.open) this.changed.fire(vscode.Uri.parse(u));
    });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    this.open.add(uri.toString());
    const q = JSON.parse(uri.query) as Query;
    const hunks = this.model.forUri(q.uri);
    const base = await this.currentText(q.uri, hunks);
    if (q.side === 'base') return base;
    const chosen = q.hunk ? hunks.filter((h) => h.id === q.hunk) : hunks.filter(isOpen);
    const text = applyHunks(base, chosen);
    // The places of the hunks' new lines, when the layout agrees with the text shown (no hunk left out).
    const layout = layoutProposal(base, chosen);
    const byId = new Map(chosen.map((h) => [h.id, h]));
    this.spans.set(uri.toString(), layout.text === text ? layout.spans.flatMap((s) => (byId.has(s.hunkId) ? [{ hunk: byId.get(s.hunkId)!, line: s.line }] : [])) : []);
    this.layoutChanged.fire();
    return text;
  }

  /** The hunks a proposal side shows, with the line where each one's new lines start. */
  placed(uri: vscode.Uri): { hunk: HunkState; line: number }[] {
    return (this.spans.get(uri.toString()) ?? []).map((p) => ({ hunk: this.model.get(p.hunk.id) ?? p.hunk, line: p.line }));
  }

  private async currentText(uri: string, hunks: HunkState[]): Promise<string> {
    if (hunks.some((h) => h.kind === 'create' && isOpen(h))) return '';
    try {
      return (await vscode.workspace.openTextDocument(vscode.Uri.parse(uri))).getText();
    } catch {
      return '';
    }
  }

  dispose(): void {
    this.unsubscribe();
    this.changed.dispose();
    this.layoutChanged.dispose();
  }
}

/** Opens the diff of a file against its proposal: one hunk, or every open hunk of the file. */
export async function showDiff(model: HunkModel, uri: string, hunk?: HunkState): Promise<void> {
  const file = vscode.Uri.parse(uri);
  const name = path.posix.basename(file.path);
  const isCreate = hunk?.kind === 'create' || model.forUri(uri).some((h) => h.kind === 'create' && isOpen(h));
  const left = isCreate ? proposalUri({ uri, side: 'base', hunk: hunk?.id }) : file;
  const right = proposalUri({ uri, side: 'proposal', hunk: hunk?.id });
  const what = hunk ? lineLabel(hunk) : 'all open hunks';
  const options: vscode.TextDocumentShowOptions = { preview: true };
  if (hunk && hunk.kind === 'edit') {
    const line = hunk.range.start.line;
    options.selection = new vscode.Range(line, 0, line, 0);
  }
  await vscode.commands.executeCommand('vscode.diff', left, right, `${name} ↔ Stet proposal (${what})`, options);
}
