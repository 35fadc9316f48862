// Wires the pieces: the server client, the model it fills, and the views that read the model.
import * as vscode from 'vscode';
import { StetClient, RestoredParams } from './client';
import { Decorator } from './decorator';
import { PROPOSAL_SCHEME, ProposalContent, showDiff } from './diff';
import { EDIT_SCHEME, ProposalEditor } from './editProposal';
import { hunkAtLine } from './logic/decorations';
import { HunkState, isOpen, lineLabel } from './logic/hunk';
import { HunkModel } from './logic/model';
import { firstPending, nextHunk, previousHunk } from './logic/navigation';
import { restoredMessage } from './logic/settings';
import { errorText } from './logic/errors';
import { shouldStart } from './logic/autostart';
import * as fs from 'fs';
import * as path from 'path';
import { HunkTree, Node } from './treeView';

/** Server uris and editor uris compare after going through vscode.Uri (percent-encoding, drive letters). */
const normalize = (uri: string) => {
  try { return vscode.Uri.parse(uri).toString(); } catch { return uri; }
};

let running: StetClient | undefined;

export function activate(context: vscode.ExtensionContext) {
  const output = vscode.window.createOutputChannel('Stet');
  let waitingForStore = false; // no .stet folder yet (stet.server.start = auto): no server, no status item
  const model = new HunkModel(normalize);
  const media = vscode.Uri.joinPath(context.extensionUri, 'media');

  const askRejectFeedback = async (hunkIds: string[]): Promise<string | null | undefined> => {
    if (!vscode.workspace.getConfiguration('stet').get<boolean>('askFeedbackOnReject', true)) return null;
    const what = hunkIds.length === 1 ? describe(model.get(hunkIds[0])) : 'these hunks';
    const text = await vscode.window.showInputBox({
      title: `Reject ${what}`,
      prompt: 'Why? (optional: the agent gets this as feedback) — Enter to reject, Escape to cancel',
      placeHolder: 'Feedback for the agent (optional)',
      ignoreFocusOut: true,
    });
    return text === undefined ? undefined : text.trim() || null;
  };

  const onRestored = (p: RestoredParams) => {
    if (p.error) {
      // The store could not be opened: the server says why and what to do.
      void vscode.window.showErrorMessage(`Stet: ${p.error}`, 'Show Log').then((pick) => pick && output.show());
      return;
    }
    const c = p.counts ?? {};
    if (!(c.pending || c.accepted || c.stale)) return; // nothing to review: stay quiet
    void vscode.window.showInformationMessage(restoredMessage(c), 'Go to First Pending').then((pick) => {
      if (pick) void reveal(firstPending(model.all()) ?? nextHunk(model.all(), undefined));
    });
  };

  const client = new StetClient(model, output, onRestored, askRejectFeedback);
  running = client;
  const decorator = new Decorator(model, media);
  const content = new ProposalContent(model);
  const tree = new HunkTree(model);
  const treeView = vscode.window.createTreeView('stet.hunks', { treeDataProvider: tree, showCollapseAll: true });
  const editor = new ProposalEditor(async (hunk, text) => {
    await client.command('stet.accept', { hunkIds: [hunk.id], text, expectedVersions: { [hunk.id]: hunk.version } });
  });
  const status = vscode.window.createStatusBarItem('stet.status', vscode.StatusBarAlignment.Left, 10);
  status.name = 'Stet';

  function describe(h: HunkState | undefined): string {
    if (!h) return 'hunk';
    return `${vscode.workspace.asRelativePath(vscode.Uri.parse(h.uri))} ${lineLabel(h)}`;
  }

  function updateStatus() {
    const counts = model.counts();
    const open = model.openCount();
    if (waitingForStore) {
      status.hide(); // a window without Stet: nothing to show
    } else if (client.status === 'stopped') {
      status.text = '$(error) Stet';
      status.tooltip = 'Stet: the review server is not running — click to restart it';
      status.command = 'stet.restartServer';
    } else if (client.status === 'starting') {
      status.text = '$(sync~spin) Stet';
      status.tooltip = 'Stet: starting the review server';
      status.command = 'stet.showOutput';
    } else {
      status.text = `$(checklist) ${counts.pending} pending`;
      status.tooltip = `Stet: ${counts.pending} pending, ${counts.accepted} accepted, ${counts.stale} stale — click for the next hunk`;
      status.command = 'stet.nextHunk';
    }
    if (!waitingForStore) status.show();
    treeView.badge = counts.pending ? { value: counts.pending, tooltip: `${counts.pending} pending` } : undefined;
    void vscode.commands.executeCommand('setContext', 'stet.hasOpenHunks', open > 0);
    updateEditorContext();
  }

  function updateEditorContext() {
    const ed = vscode.window.activeTextEditor;
    const hunks = ed ? model.forUri(ed.document.uri.toString()) : [];
    // Keys are bound per file, not per cursor line: a context key updated on every cursor move
    // lags behind a fast keystroke. The command itself finds the hunk at the cursor.
    void vscode.commands.executeCommand('setContext', 'stet.fileHasOpenHunks', hunks.some(isOpen));
  }

  async function reveal(h: HunkState | undefined) {
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

  function cursor() {
    const ed = vscode.window.activeTextEditor;
    return ed && ed.document.uri.scheme === 'file' ? { uri: ed.document.uri.toString(), line: ed.selection.active.line } : undefined;
  }

  /** The hunk a command is about: a tree node, a {hunkId} argument, or the one at the cursor. */
  function target(arg: unknown): HunkState | undefined {
    if (arg && typeof arg === 'object') {
      const a = arg as { type?: string; hunk?: HunkState; hunkId?: string };
      if (a.type === 'hunk' && a.hunk) return model.get(a.hunk.id) ?? a.hunk;
      if (typeof a.hunkId === 'string') return model.get(a.hunkId);
    }
    const ed = vscode.window.activeTextEditor;
    if (!ed) return undefined;
    return hunkAtLine(model.forUri(ed.document.uri.toString()), ed.selection.active.line);
  }

  async function run(what: string, fn: () => Promise<unknown>) {
    try {
      await fn();
    } catch (e) {
      void vscode.window.showErrorMessage(`Stet: could not ${what}: ${errorText(e)}`);
    }
  }

  const requireHunk = (arg: unknown): HunkState | undefined => {
    const h = target(arg);
    if (!h) void vscode.window.showInformationMessage('Stet: no open hunk at the cursor.');
    return h;
  };

  const accept = (arg: unknown) => {
    const h = requireHunk(arg);
    if (h) return run('accept', () => client.command('stet.accept', { hunkIds: [h.id], expectedVersions: { [h.id]: h.version } }));
  };
  const reject = async (arg: unknown) => {
    const h = requireHunk(arg);
    if (!h) return;
    const feedback = await askRejectFeedback([h.id]);
    if (feedback === undefined) return;
    const params: Record<string, unknown> = { hunkIds: [h.id], expectedVersions: { [h.id]: h.version } };
    if (feedback) params.feedback = feedback;
    return run('reject', () => client.command('stet.reject', params));
  };

  // A "Diff" and an "Edit…" lens beside the server's Accept / Reject lenses on each open hunk.
  const lensChanged = new vscode.EventEmitter<void>();
  const lenses: vscode.CodeLensProvider = {
    onDidChangeCodeLenses: lensChanged.event,
    provideCodeLenses(doc) {
      return model.forUri(doc.uri.toString()).filter((h) => isOpen(h) && h.kind === 'edit').flatMap((h) => {
        const line = Math.min(h.range.start.line, doc.lineCount - 1);
        const range = new vscode.Range(line, 0, line, 0);
        const out = [new vscode.CodeLens(range, { title: 'Diff', command: 'stet.showDiff', arguments: [{ hunkId: h.id }] })];
        if (h.status === 'pending') {
          out.push(new vscode.CodeLens(range, { title: 'Edit…', tooltip: 'Edit the proposed text, then accept it', command: 'stet.acceptWithChanges', arguments: [{ hunkId: h.id }] }));
        }
        return out;
      });
    },
  };

  context.subscriptions.push(
    output, client, decorator, content, tree, treeView, status, lensChanged,
    { dispose: model.onDidChange(() => { updateStatus(); lensChanged.fire(); }) },
    client.onStatus(() => updateStatus()),
    vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, content),
    vscode.workspace.registerFileSystemProvider(EDIT_SCHEME, editor, { isCaseSensitive: true }),
    vscode.languages.registerCodeLensProvider({ scheme: 'file' }, lenses),
    vscode.window.onDidChangeActiveTextEditor(() => updateEditorContext()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('stet.server')) void startIfWanted(true);
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void startIfWanted(false)),
    vscode.commands.registerCommand('stet.acceptAtCursor', accept),
    vscode.commands.registerCommand('stet.acceptHunk', accept),
    vscode.commands.registerCommand('stet.rejectAtCursor', reject),
    vscode.commands.registerCommand('stet.rejectHunk', reject),
    vscode.commands.registerCommand('stet.acceptWithChanges', async (arg: unknown) => {
      const h = requireHunk(arg);
      if (h) await editor.open(h);
    }),
    vscode.commands.registerCommand('stet.undoHunk', (arg: unknown) => {
      const h = target(arg);
      if (h) return run('undo', () => client.command('stet.undo', { hunkIds: [h.id] }));
    }),
    vscode.commands.registerCommand('stet.undoLast', () => {
      const decided = model.all().filter((h) => h.decidedAt && ['accepted', 'applied', 'rejected'].includes(h.status));
      decided.sort((a, b) => (a.decidedAt! < b.decidedAt! ? 1 : -1));
      const h = decided[0];
      if (!h) return vscode.window.showInformationMessage('Stet: no decision to undo.');
      return run('undo', async () => {
        await client.command('stet.undo', { hunkIds: [h.id] });
        void vscode.window.showInformationMessage(`Stet: undid the decision on ${describe(h)} (it was ${h.status}); it is pending again.`);
      });
    }),
    vscode.commands.registerCommand('stet.nextHunk', () => reveal(nextHunk(model.all(), cursor()))),
    vscode.commands.registerCommand('stet.previousHunk', () => reveal(previousHunk(model.all(), cursor()))),
    vscode.commands.registerCommand('stet.revealHunk', (arg: unknown) => reveal(target(arg))),
    vscode.commands.registerCommand('stet.showDiff', (arg: unknown) => {
      const h = target(arg);
      if (h) return showDiff(model, h.uri, h);
      const ed = vscode.window.activeTextEditor;
      if (ed && model.forUri(ed.document.uri.toString()).some(isOpen)) return showDiff(model, ed.document.uri.toString());
      return vscode.window.showInformationMessage('Stet: no open hunk here to diff.');
    }),
    vscode.commands.registerCommand('stet.refresh', () => client.refresh()),
    vscode.commands.registerCommand('stet.restartServer', () => { waitingForStore = false; return client.restart(); }),
    vscode.commands.registerCommand('stet.showOutput', () => output.show()),
  );
  // Start where Stet is in use; otherwise wait for a .stet folder to appear (an agent's first proposal).
  const storeWatchers: vscode.Disposable[] = [];
  const hasStore = () => (vscode.workspace.workspaceFolders ?? [])
    .map((f) => f.uri.scheme === 'file' && fs.existsSync(path.join(f.uri.fsPath, '.stet')));
  async function startIfWanted(restart: boolean) {
    const mode = vscode.workspace.getConfiguration('stet.server').get('start');
    if (!shouldStart(mode, hasStore())) {
      waitingForStore = true;
      await client.stop();
      output.appendLine('[stet] no .stet folder in this workspace: the server starts when one appears');
      updateStatus();
      return;
    }
    const wasWaiting = waitingForStore;
    waitingForStore = false;
    for (const w of storeWatchers.splice(0)) w.dispose();
    if (restart || wasWaiting || client.status === 'stopped') await client.restart();
  }
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '{.stet,.stet/*}'));
    watcher.onDidCreate(() => { if (waitingForStore) void startIfWanted(false); });
    storeWatchers.push(watcher);
  }
  context.subscriptions.push({ dispose: () => storeWatchers.forEach((w) => { w.dispose(); }) });
  updateStatus();
  void startIfWanted(false);
}

export function deactivate(): Promise<void> | undefined {
  // Stop the server cleanly (shutdown/exit) and let VS Code wait for it.
  return running?.stop();
}

export type { Node };
