// What the command modules share: the model, the server client and the small helpers that find and show
// a hunk. activate() builds one Deps and hands it to every module's register().
import * as vscode from 'vscode';
import { StetClient } from './client';
import { ProposalEditor } from './editProposal';
import { ProposalContent, showDiff } from './diff';
import { InlineBlocks } from './inlineBlocks';
import { REVIEW_SCHEME, ReviewContent } from './review';
import { StatusView } from './status';
import { HunkTree, Node } from './treeView';
import { hunkAtLine } from './logic/decorations';
import { errorText } from './logic/errors';
import { HunkState, lineLabel } from './logic/hunk';
import { HunkModel } from './logic/model';
import { Cursor } from './logic/navigation';
import { ServerStarter } from './starter';

export interface Deps {
  model: HunkModel;
  client: StetClient;
  output: vscode.OutputChannel;
  editor: ProposalEditor;
  starter: ServerStarter;
  review: ReviewContent;
  /** The proposal side of the two-pane Diff (stet-proposal:). */
  proposals: ProposalContent;
  blocks: InlineBlocks;
  status: StatusView;
  /** The Stet view (its turn filter). */
  tree: HunkTree;
  treeView: vscode.TreeView<Node>;
  /**
   * Asks VS Code for the file editors' lenses again (ours and the server's). VS Code cancels a pending lens
   * update when the editor text loses focus (a click on a block's button, a quick pick): after a
   * decision, once the editor is in front again, this makes sure the lenses follow.
   */
  refreshLenses: () => void;
  onRefreshLenses: vscode.Event<void>;
  /** The optional reason for a rejection: null for none, undefined when the developer cancelled. */
  askRejectFeedback: (hunkIds: string[], what?: string) => Promise<string | null | undefined>;
}

/** Server uris and editor uris compare after going through vscode.Uri (percent-encoding, drive letters). */
export const normalize = (uri: string) => {
  try { return vscode.Uri.parse(uri).toString(); } catch { return uri; }
};

/** "app.py lines 3–5": the hunk as the developer knows it. */
export function describe(h: HunkState | undefined): string {
  if (!h) return 'hunk';
  return `${vscode.workspace.asRelativePath(vscode.Uri.parse(h.uri))} ${lineLabel(h)}`;
}

/** Opens the file at the hunk (a new file: its diff). */
export async function reveal(model: HunkModel, h: HunkState | undefined): Promise<void> {
  if (!h) {
    void vscode.window.showInformationMessage('Stet: no open hunk.');
    return;
  }
  if (h.kind === 'create') return showDiff(model, h.uri, h);
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(h.uri));
  const line = Math.min(h.range.start.line, doc.lineCount - 1);
  const pos = new vscode.Position(line, 0);
  const ed = await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos), preview: false });
  ed.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/** Where the cursor is, in a file editor. */
export function cursor(): Cursor | undefined {
  const ed = vscode.window.activeTextEditor;
  return ed && ed.document.uri.scheme === 'file' ? { uri: ed.document.uri.toString(), line: ed.selection.active.line } : undefined;
}

type Finder = Pick<Deps, 'model' | 'review' | 'blocks'>;

/**
 * The hunk a command is about: a tree node, a {hunkId} argument, a proposal block's thread, or the one at
 * the cursor — in a file, or in the proposal side of a review.
 */
export function target(deps: Finder, arg: unknown): HunkState | undefined {
  const { model } = deps;
  if (arg && typeof arg === 'object') {
    const a = arg as { type?: string; hunk?: HunkState; hunkId?: string };
    if (a.type === 'hunk' && a.hunk) return model.get(a.hunk.id) ?? a.hunk;
    if (typeof a.hunkId === 'string') return model.get(a.hunkId);
    const fromThread = deps.blocks.hunkOf(arg);
    if (fromThread) return fromThread;
  }
  const ed = vscode.window.activeTextEditor;
  if (!ed) return undefined;
  if (ed.document.uri.scheme === REVIEW_SCHEME) return deps.review.hunkAt(ed.document.uri, ed.selection.active.line);
  return hunkAtLine(model.forUri(ed.document.uri.toString()), ed.selection.active.line);
}

/** Like target(), but says so when there is no hunk. */
export function requireHunk(deps: Finder, arg: unknown): HunkState | undefined {
  const h = target(deps, arg);
  if (!h) void vscode.window.showInformationMessage('Stet: no open hunk at the cursor.');
  return h;
}

/** Runs a server call; a failure becomes an error message rather than an unhandled rejection. */
export async function run(what: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    void vscode.window.showErrorMessage(`Stet: could not ${what}: ${errorText(e)}`);
  }
}
