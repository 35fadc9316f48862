// Wires the pieces: the server client, the model it fills, the views that read the model, and the
// command modules (each registers its own commands).
import * as vscode from 'vscode';
import { StetClient } from './client';
import * as bulk from './commands/bulk';
import * as decide from './commands/decide';
import * as diff from './commands/diff';
import * as navigate from './commands/navigate';
import * as parts from './commands/parts';
import * as reviewCommands from './commands/review';
import * as server from './commands/server';
import * as turns from './commands/turns';
import { Decorator } from './decorator';
import { ProposalContent } from './diff';
import { Deps, normalize } from './deps';
import { EDIT_SCHEME, ProposalEditor } from './editProposal';
import { feedbackAsker } from './feedback';
import { InlineBlocks } from './inlineBlocks';
import { HunkModel } from './logic/model';
import { ProposalNotifier } from './notifier';
import { RequestChangesSetting } from './requestChanges';
import { ReviewContent } from './review';
import { ServerStarter } from './starter';
import { StatusView } from './status';
import { HunkTree } from './treeView';

let running: StetClient | undefined;

export function activate(context: vscode.ExtensionContext) {
  const output = vscode.window.createOutputChannel('Stet');
  const model = new HunkModel(normalize);
  const askRejectFeedback = feedbackAsker(model);
  const client = new StetClient(model, output, askRejectFeedback);
  running = client;
  const starter = new ServerStarter(client, output);
  const editor = new ProposalEditor(async (hunk, text) => {
    await client.command('stet.accept', { hunkIds: [hunk.id], text, expectedVersions: { [hunk.id]: hunk.version } });
  });
  const tree = new HunkTree(model);
  const treeView = vscode.window.createTreeView('stet.hunks', { treeDataProvider: tree, showCollapseAll: true });
  const media = vscode.Uri.joinPath(context.extensionUri, 'media');
  const status = new StatusView(model, client, starter, treeView);
  const review = new ReviewContent(model);
  const proposals = new ProposalContent(model);
  const blocks = new InlineBlocks(model);
  client.beforeDecide = (ids) => {
    ids.forEach((id) => blocks.hide(id));
    return () => ids.forEach((id) => blocks.restore(id));
  };
  context.subscriptions.push(
    output, client, starter, editor, tree, treeView, status, review, proposals, blocks,
    new Decorator(model, media),
    new RequestChangesSetting(output),
    vscode.workspace.registerFileSystemProvider(EDIT_SCHEME, editor, { isCaseSensitive: true }),
  );

  const lensRefresh = new vscode.EventEmitter<void>();
  context.subscriptions.push(lensRefresh);
  const deps: Deps = {
    model, client, output, editor, starter, review, proposals, blocks, status, tree, treeView, askRejectFeedback,
    refreshLenses: () => lensRefresh.fire(), onRefreshLenses: lensRefresh.event,
  };
  const notifier = new ProposalNotifier(model, status, (proposalId) => vscode.commands.executeCommand('stet.reviewProposal', { type: 'proposal', group: { proposalId } }));
  context.subscriptions.push(notifier);
  for (const module of [decide, bulk, navigate, diff, parts, turns, server]) module.register(context, deps);
  reviewCommands.register(context, deps, () => notifier.latest);

  void starter.startIfWanted(false);
}

export function deactivate(): Promise<void> | undefined {
  // Stop the server cleanly (shutdown/exit) and let VS Code wait for it.
  return running?.stop();
}
