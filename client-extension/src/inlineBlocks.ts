// A pending multi-line hunk's new text as whole lines in the file editor, right under its (struck, red) old
// lines: a comment-thread zone holding the lines as a code block in the file's language (syntax colours),
// as tall as its lines (up to BLOCK_MAX_LINES), with the hunk's Accept / Reject… / Edit… / Diff buttons in
// its title bar. VS Code gives extensions no other way to put real lines between a document's lines (view
// zones and editor insets are not public API); decorations can only add text on existing lines.
import * as vscode from 'vscode';
import { BlockMark, blockView, inlineStyle, marksFor, sameLines } from './logic/decorations';
import { HunkState, lineLabel } from './logic/hunk';
import { HunkModel } from './logic/model';

export const CONTROLLER_ID = 'stet-proposals';

interface Entry { thread: vscode.CommentThread; key: string; hunkId: string }

/** A fence longer than any run of backticks in the text, so the code block cannot end early. */
function fence(lines: string[]): string {
  const longest = Math.max(2, ...lines.map((l) => Math.max(0, ...(l.match(/`+/g) ?? []).map((r) => r.length))));
  return '`'.repeat(longest + 1);
}

export class InlineBlocks implements vscode.Disposable {
  private readonly controller = vscode.comments.createCommentController(CONTROLLER_ID, 'Stet proposals');
  private readonly entries = new Map<string, Entry>(); // by hunk id
  private readonly byThread = new WeakMap<vscode.CommentThread, string>();
  /** Blocks taken down while their decision is on its way (hunk id -> the key they had). */
  private readonly suppressed = new Map<string, string>();
  /**
   * Documents with a block not drawn yet because the buffer does not hold its hunk's old text where the
   * hunk says (the edit that puts it there has not reached the buffer): drawn on the document's next change.
   */
  private waiting = new Set<string>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly model: HunkModel) {
    this.subscriptions.push(
      { dispose: model.onDidChange(() => this.render()) },
      vscode.workspace.onDidOpenTextDocument(() => this.render()),
      vscode.workspace.onDidCloseTextDocument(() => this.render()),
      vscode.workspace.onDidChangeTextDocument((e) => this.waiting.has(e.document.uri.toString()) && this.render()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('stet.inlineProposal') && this.render()),
    );
    this.render();
  }

  /**
   * Takes a hunk's block down before its decision goes to the server, so the zone is gone before the
   * edit lands in the buffer (a zone removed while the lines under it change left the editor drawn
   * wrong); `restore` brings it back if the decision did not happen.
   */
  hide(hunkId: string): void {
    const e = this.entries.get(hunkId);
    if (!e) return;
    this.suppressed.set(hunkId, e.key);
    e.thread.dispose();
    this.entries.delete(hunkId);
  }

  restore(hunkId: string): void {
    if (this.suppressed.delete(hunkId)) this.render();
  }

  /** The hunk behind a thread (its title-bar buttons hand us the thread). */
  hunkOf(thread: unknown): HunkState | undefined {
    if (!thread || typeof thread !== 'object') return undefined;
    const id = this.byThread.get(thread as vscode.CommentThread);
    return id ? this.model.get(id) : undefined;
  }

  private render(): void {
    const style = inlineStyle(vscode.workspace.getConfiguration('stet').get('inlineProposal'));
    const wanted = new Map<string, { mark: BlockMark; hunk: HunkState; languageId: string }>();
    const waiting = new Set<string>();
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme !== 'file') continue;
      const hunks = this.model.forUri(doc.uri.toString());
      for (const mark of marksFor(hunks, style).blocks) {
        const hunk = hunks.find((h) => h.id === mark.hunkId);
        if (!hunk) continue;
        // A block sits under its hunk's old lines: drawn anywhere else it stays there (VS Code moves a
        // zone with the edits made after it, and the hunk's range then does not change). The server tells
        // a hunk where the edit on its way leaves its text (the rest of a split), before the buffer has it.
        if (!sameLines(doc.getText(new vscode.Range(hunk.range.start.line, hunk.range.start.character, hunk.range.end.line, hunk.range.end.character)), hunk.oldText)) {
          waiting.add(doc.uri.toString());
          continue;
        }
        wanted.set(hunk.id, { mark, hunk, languageId: doc.languageId });
      }
    }
    this.waiting = waiting;
    for (const [id, e] of this.entries) {
      if (!wanted.has(id)) {
        e.thread.dispose();
        this.entries.delete(id);
      }
    }
    for (const id of this.suppressed.keys()) if (!wanted.has(id)) this.suppressed.delete(id);
    for (const [id, { mark, hunk, languageId }] of wanted) {
      const key = `${hunk.version}|${hunk.status}|${hunk.range.start.line}|${mark.afterLine}|${languageId}`;
      if (this.suppressed.get(id) === key) continue;
      this.suppressed.delete(id);
      const old = this.entries.get(id);
      if (old?.key === key) continue;
      old?.thread.dispose();
      const thread = this.create(hunk, mark, languageId);
      this.entries.set(id, { thread, key, hunkId: id });
      this.byThread.set(thread, id);
    }
  }

  private create(h: HunkState, mark: BlockMark, languageId: string): vscode.CommentThread {
    const uri = vscode.Uri.parse(h.uri);
    // An empty range on the last old line (an insertion: the line above): VS Code puts the zone under that
    // line, and the old lines keep their own red marks (a thread's range would paint over them).
    const line = Math.max(0, mark.afterLine);
    const range = new vscode.Range(line, 0, line, 0);
    const { shown, more } = blockView(mark.lines);
    const f = fence(shown);
    const text = [`${f}${languageId}`, ...shown, f];
    if (more) {
      const diff = `command:stet.showDiff?${encodeURIComponent(JSON.stringify([{ hunkId: h.id }]))}`;
      text.push('', `*… and ${more} more line${more === 1 ? '' : 's'}:* [Diff](${diff}) shows the whole proposal.`);
    }
    const body = new vscode.MarkdownString(text.join('\n'));
    if (more) body.isTrusted = { enabledCommands: ['stet.showDiff'] };
    const n = mark.lines.length;
    const what = h.oldText === '' ? `${n} new lines, ${lineLabel(h)}` : `${n} lines replacing ${lineLabel(h)}`;
    const comment: vscode.Comment = {
      body,
      mode: vscode.CommentMode.Preview,
      author: { name: h.agent ?? 'Proposed' },
      label: h.status === 'accepted' ? 'accepted, not yet in the file' : undefined,
      contextValue: `stet.${h.status}`,
    };
    const thread = this.controller.createCommentThread(uri, range, [comment]);
    thread.canReply = false;
    thread.label = h.message ? `${what} — ${h.message}` : what;
    thread.contextValue = `stet.${h.status}`;
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    return thread;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    for (const e of this.entries.values()) e.thread.dispose();
    this.controller.dispose();
  }
}
