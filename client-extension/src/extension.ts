// Wires the pieces: the server client, the model it fills, the views that read the model, and the
// command modules (each registers its own commands).
import * as vscode from 'vscode';
import { StetClient } from './client';
import * as decide from './commands/decide';
import * as diff from './commands/diff';
import * as navigate from './commands/navigate';
import * as server from './commands/server';
import { Decorator } from './decorator';
import { Deps, normalize } from './deps';
import { EDIT_SCHEME, ProposalEditor } from './editProposal';
import { feedbackAsker } from './feedback';
import { HunkModel } from './logic/model';
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
  context.subscriptions.push(
    output, client, starter, tree, treeView,
    new Decorator(model, media),
    new StatusView(model, client, starter, treeView),
    vscode.workspace.registerFileSystemProvider(EDIT_SCHEME, editor, { isCaseSensitive: true }),
  );

  const deps: Deps = { model, client, output, editor, starter, askRejectFeedback };
  for (const module of [decide, navigate, diff, server]) module.register(context, deps);

  void starter.startIfWanted(false);
}

export function deactivate(): Promise<void> | undefined {
  // Stop the server cleanly (shutdown/exit) and let VS Code wait for it.
  return running?.stop();
}
