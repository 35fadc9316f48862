// The review surface: VS Code's multi-file diff editor (the `vscode.changes` command) over two virtual
// documents per file — the file as it is now ("base") and the file with the reviewed hunks applied
// ("proposal") — for one file, a proposal, a task or everything pending. Real lines, the language's syntax
// colours, VS Code's own red/green diff; Accept / Reject / Edit… / Diff lenses sit inside it on each hunk.
import * as vscode from 'vscode';
import { HunkState, lineLabel } from './logic/hunk';
import { HunkModel } from './logic/model';
import { Layout, Scope, baseText, fileLensLine, layoutProposal, parseScopeKey, reviewFiles, reviewHunks, scopeKey, scopeTitle, spanAtLine, unkeep } from './logic/review';

export const REVIEW_SCHEME = 'stet-review';

interface Query { uri: string; side: 'base' | 'proposal'; scope: string }

export function reviewUri(q: Query): vscode.Uri {
  const file = vscode.Uri.parse(q.uri);
  // The path keeps the file's name (language, icon, label); the query says what to show.
  return vscode.Uri.from({ scheme: REVIEW_SCHEME, path: file.path, query: JSON.stringify(q) });
}

export function parseReviewUri(uri: vscode.Uri): (Query & { scopeValue: Scope }) | undefined {
  if (uri.scheme !== REVIEW_SCHEME) return undefined;
  try {
    const q = JSON.parse(uri.query) as Query;
    const scopeValue = parseScopeKey(q.scope);
    return scopeValue ? { ...q, scopeValue } : undefined;
  } catch {
    return undefined;
  }
}

/** Both sides of every open review document, kept in step with the model, the buffers and the disk. */
export class ReviewContent implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly layoutChanged = new vscode.EventEmitter<void>();
  /** Fires after a proposal side was recomputed (its lenses follow). */
  readonly onDidChangeLayout = this.layoutChanged.event;
  /** The layout each proposal document was last given, by its uri: lenses and keys read positions here. */
  private readonly layouts = new Map<string, { layout: Layout; hunks: HunkState[] }>();
  private readonly open = new Map<string, string>(); // review uri -> file uri
  /** The hunks a current side shows, with their ranges in it (kept captures' old text put back), by its uri. */
  private readonly bases = new Map<string, HunkState[]>();
  /** Counts the changes to the hunks and files; by review uri, the count its text was computed at. */
  private changes = 0;
  private readonly computedAt = new Map<string, number>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly model: HunkModel) {
    const refire = (fileUri?: string) => {
      this.changes++;
      for (const [u, f] of this.open) if (!fileUri || f === fileUri) this.changed.fire(vscode.Uri.parse(u));
    };
    const unsubscribe = model.onDidChange((uris, full) => (full ? refire() : uris.forEach((u) => refire(u))));
    const watcher = vscode.workspace.createFileSystemWatcher('**/*');
    this.subscriptions.push(
      { dispose: unsubscribe },
      watcher,
      watcher.onDidChange((u) => refire(u.toString())),
      watcher.onDidCreate((u) => refire(u.toString())),
      watcher.onDidDelete((u) => refire(u.toString())),
      vscode.workspace.onDidChangeTextDocument((e) => e.document.uri.scheme === 'file' && refire(e.document.uri.toString())),
      // VS Code drops a change event for a document it has not opened yet: one that changed between our
      // answer and its opening (the first hunks arriving from the server just as a review restored after a
      // reload asks for its documents) would keep its stale text. It is read again when it opens.
      vscode.workspace.onDidOpenTextDocument((d) => {
        const at = this.computedAt.get(d.uri.toString());
        if (at !== undefined && at !== this.changes) this.changed.fire(d.uri);
      }),
      vscode.workspace.onDidCloseTextDocument((d) => {
        this.open.delete(d.uri.toString());
        this.layouts.delete(d.uri.toString());
        this.bases.delete(d.uri.toString());
        this.computedAt.delete(d.uri.toString());
      }),
    );
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const q = parseReviewUri(uri);
    if (!q) return '';
    this.open.set(uri.toString(), q.uri);
    this.computedAt.set(uri.toString(), this.changes);
    const current = await currentText(q.uri);
    const fileHunks = this.model.forUri(q.uri);
    const created = baseText(current, fileHunks.filter((h) => h.kind === 'create' && (h.status === 'pending' || h.status === 'accepted')));
    // Kept captures: their new text is in the file already; the current side shows their old text.
    const { text: base, hunks: shown } = unkeep(created, reviewHunks(fileHunks, q.scopeValue));
    this.bases.set(uri.toString(), shown);
    if (q.side === 'base') return base;
    const layout = layoutProposal(base, shown);
    this.layouts.set(uri.toString(), { layout, hunks: shown });
    this.layoutChanged.fire();
    return layout.text;
  }

  /** The hunks a proposal document shows, with where each starts in it. */
  placed(uri: vscode.Uri): { hunk: HunkState; line: number; lines: number }[] {
    const entry = this.layouts.get(uri.toString());
    if (!entry) return [];
    return entry.layout.spans.flatMap((s) => {
      const hunk = this.model.get(s.hunkId) ?? entry.hunks.find((h) => h.id === s.hunkId);
      return hunk ? [{ hunk, line: s.line, lines: s.lines }] : [];
    });
  }

  /** The hunks a current side (base) document shows, each with its range in that document. */
  placedBase(uri: vscode.Uri): HunkState[] {
    return (this.bases.get(uri.toString()) ?? []).map((h) => {
      const now = this.model.get(h.id);
      return now ? { ...now, range: h.range } : h;
    });
  }

  /** The hunk under a line of a proposal document (the keys use it inside the review). */
  hunkAt(uri: vscode.Uri, line: number): HunkState | undefined {
    const entry = this.layouts.get(uri.toString());
    const span = entry && spanAtLine(entry.layout.spans, line);
    return span ? this.model.get(span.hunkId) : undefined;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changed.dispose();
    this.layoutChanged.dispose();
  }
}

/**
 * The file's text now: the open buffer when VS Code has it, else the file on disk (read without opening a
 * document, so the review does not make the server track a buffer nobody sees).
 */
export async function currentText(uri: string): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
  if (open) return open.getText();
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.parse(uri)));
  } catch {
    return undefined;
  }
}

/**
 * Accept / Reject… / Edit… / Go to file on each hunk inside the review, and the file's Accept file /
 * Reject file pair on its first pending hunk (line 0 is folded away when the first change is further down).
 */
export class ReviewLenses implements vscode.CodeLensProvider {
  readonly onDidChangeCodeLenses: vscode.Event<void>;

  constructor(private readonly content: ReviewContent) {
    this.onDidChangeCodeLenses = content.onDidChangeLayout;
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const q = parseReviewUri(doc.uri);
    if (!q || q.side !== 'proposal') return [];
    const placed = this.content.placed(doc.uri);
    const last = Math.max(0, doc.lineCount - 1);
    const at = (line: number) => new vscode.Range(Math.min(line, last), 0, Math.min(line, last), 0);
    const out: vscode.CodeLens[] = [];
    for (const { hunk, line } of placed) {
      const arg = { hunkId: hunk.id };
      if (hunk.status === 'pending') {
        out.push(
          new vscode.CodeLens(at(line), { title: 'Accept', tooltip: `Accept ${lineLabel(hunk)}`, command: 'stet.acceptHunk', arguments: [arg] }),
          new vscode.CodeLens(at(line), { title: 'Reject…', tooltip: `Reject ${lineLabel(hunk)}`, command: 'stet.rejectHunk', arguments: [arg] }),
        );
        if (hunk.kind === 'edit') {
          out.push(new vscode.CodeLens(at(line), { title: 'Edit…', tooltip: 'Edit the proposed text in its place, then accept it', command: 'stet.acceptWithChanges', arguments: [arg] }));
        }
      } else {
        out.push(new vscode.CodeLens(at(line), { title: 'Accepted, not yet in the file', command: '' }));
      }
      out.push(new vscode.CodeLens(at(line), { title: 'Go to file', tooltip: 'Open the file at this hunk', command: 'stet.revealHunk', arguments: [arg] }));
    }
    const fileLine = fileLensLine(placed);
    if (fileLine !== undefined) {
      const n = placed.filter((p) => p.hunk.status === 'pending').length;
      const arg = { uri: q.uri, scope: q.scope };
      const what = `${n} pending hunk${n === 1 ? '' : 's'} of this file in this review`;
      out.push(
        new vscode.CodeLens(at(fileLine), { title: `Accept file (${n})`, tooltip: `Accept the ${what}`, command: 'stet.acceptFileHunks', arguments: [arg] }),
        new vscode.CodeLens(at(fileLine), { title: `Reject file (${n})…`, tooltip: `Reject the ${what}`, command: 'stet.rejectFileHunks', arguments: [arg] }),
      );
    }
    return out;
  }
}

const titles = new Set<string>();

/** Is the active editor a review (a multi-file diff this extension opened)? */
export function isReviewActive(): boolean {
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  if (!tab) return false;
  if (tab.input instanceof vscode.TabInputText || tab.input instanceof vscode.TabInputTextDiff) {
    const u = tab.input instanceof vscode.TabInputText ? tab.input.uri : tab.input.modified;
    return u.scheme === REVIEW_SCHEME;
  }
  // A multi-file diff (TabInputTextMultiDiff, newer than the API this extension builds against) lists its
  // diffs; a review restored after a reload is known by them, not by a title opened in this session.
  const diffs = (tab.input as { textDiffs?: { modified?: vscode.Uri }[] } | undefined)?.textDiffs;
  if (Array.isArray(diffs) && diffs.some((d) => d.modified?.scheme === REVIEW_SCHEME)) return true;
  return [...titles].some((t) => tab.label.startsWith(t));
}

/** Opens (or re-opens, fresh) the review of a scope; false when nothing in it is pending. */
export async function openReview(model: HunkModel, scope: Scope): Promise<boolean> {
  const files = reviewFiles(model.all(), scope);
  if (!files.length) return false;
  const key = scopeKey(scope);
  const label = scope.kind === 'file' ? vscode.workspace.asRelativePath(vscode.Uri.parse(scope.uri)) : undefined;
  const title = scopeTitle(scope, label);
  titles.add(title);
  // The list of files is fixed when the editor opens: close an older one of the same review first.
  const stale = vscode.window.tabGroups.all.flatMap((g) => g.tabs)
    .filter((t) => t.label === title || (t.label.startsWith(`${title} (`) && !(t.input instanceof vscode.TabInputText)));
  if (stale.length) await vscode.window.tabGroups.close(stale, true);
  const resources = files.map((uri) => [
    vscode.Uri.parse(uri),
    reviewUri({ uri, side: 'base', scope: key }),
    reviewUri({ uri, side: 'proposal', scope: key }),
  ]);
  try {
    await vscode.commands.executeCommand('vscode.changes', title, resources);
  } catch {
    // `vscode.changes` is VS Code's multi-file diff (marked experimental by VS Code): without it, the
    // same two documents in the two-pane diff, one file at a time.
    const [label, base, proposal] = resources[0];
    await vscode.commands.executeCommand('vscode.diff', base, proposal, `${title}: ${vscode.workspace.asRelativePath(label)}`);
    if (resources.length > 1) {
      void vscode.window.showInformationMessage(`Stet: this VS Code has no multi-file diff; showing 1 of ${resources.length} files (the Stet view opens the others).`);
    }
  }
  return true;
}

