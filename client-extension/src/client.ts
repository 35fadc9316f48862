// Starts and keeps the Stet language server: restarts it when it dies, re-reads the hunks from it.
import * as vscode from 'vscode';
import {
  CloseAction, CodeLensRefreshRequest, CodeLensRequest, ErrorAction, ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, State,
} from 'vscode-languageclient/node';
import { HunkState } from './logic/hunk';
import { HunkModel } from './logic/model';
import { findExecutable } from './logic/which';
import { ServerCommand, commandLine, masked, serverCommand, startFailureMessage, storeOption } from './logic/settings';
import { errorText } from './logic/errors';
import { visibleDiagnostics } from './logic/diagnostics';

/** Crashes within this window before we stop restarting (a server that dies at once, in a loop). */
const CRASH_WINDOW_MS = 60_000;
const MAX_CRASHES = 5;
/** The server's lenses come later than this: answer without them, ask again when they come. */
const LENS_WAIT_MS = 1500;

export interface RestoredParams { files: number; counts: Record<string, number>; durationMs: number; error?: string }

export type Status = 'starting' | 'running' | 'stopped';

/** One decision the server confirmed: which command, on which hunks, and their states after it. */
export interface Decision { command: string; hunkIds: string[]; hunks: HunkState[] }

const DECIDING = /^stet\.(accept|reject)$/;

/** The hunks a command's params name: `hunkIds`, or the one `hunkId` of stet.acceptLines / stet.rejectLines. */
function hunkIdsOf(params: unknown): string[] {
  const p = params as { hunkIds?: unknown; hunkId?: unknown } | null | undefined;
  if (Array.isArray(p?.hunkIds)) return p.hunkIds.filter((x): x is string => typeof x === 'string');
  return typeof p?.hunkId === 'string' ? [p.hunkId] : [];
}

/** Keep Stet's hunks out of Problems (the extension renders them itself)? */
const hideFromProblems = () => vscode.workspace.getConfiguration('stet').get<boolean>('hideHunksFromProblems', true);

export class StetClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private crashes: number[] = [];
  private ranSinceStart = false;
  private readonly statusEmitter = new vscode.EventEmitter<Status>();
  readonly onStatus = this.statusEmitter.event;
  private readonly restoredEmitter = new vscode.EventEmitter<RestoredParams>();
  /** stet/restored, once the hunks have been re-read. */
  readonly onRestored = this.restoredEmitter.event;
  private readonly decidedEmitter = new vscode.EventEmitter<Decision>();
  /** A stet.accept / stet.reject the server answered (from any lens, key, button or view). */
  readonly onDidDecide = this.decidedEmitter.event;
  /** The server's diagnostics as sent, per uri, to filter again when the setting changes. */
  private readonly diagnostics = new Map<string, { uri: vscode.Uri; all: vscode.Diagnostic[]; key: string }>();
  /** Called before a decision the server's own lens or code action makes; returns what undoes it on failure. */
  beforeDecide: ((hunkIds: string[]) => () => void) | undefined;
  /** Bumped by every real change of the hunks; the server's lenses are re-queried only when it moved. */
  private generation = 0;
  private lensesAt = -1;
  status: Status = 'stopped';
  private disposables: vscode.Disposable[] = [];

  constructor(
    private readonly model: HunkModel,
    private readonly output: vscode.OutputChannel,
    private readonly askRejectFeedback: (hunkIds: string[], what?: string) => Promise<string | null | undefined>,
  ) {
    model.onDidChange(() => { this.generation++; });
  }

  private setStatus(s: Status) {
    this.status = s;
    this.statusEmitter.fire(s);
  }

  async start(): Promise<void> {
    const cfg = vscode.workspace.getConfiguration('stet.server');
    const cmd = serverCommand({ command: cfg.get('command'), python: cfg.get('python') });
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!findExecutable(cmd.command, cwd)) {
      this.setStatus('stopped');
      this.showStartFailure(cmd, 'not found');
      return;
    }
    const db = storeOption(cfg.get('db'), cwd);
    this.output.appendLine(`[stet] starting ${commandLine(cmd)}${cwd ? ` in ${cwd}` : ''}${db ? ` with the store ${masked(db)}` : ''}`);
    const serverOptions: ServerOptions = { command: cmd.command, args: cmd.args, options: { cwd } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      initializationOptions: db ? { db } : undefined,
      outputChannel: this.output,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => this.onClosed(cmd),
      },
      middleware: {
        // The server's "Reject…" lenses and code actions run stet.reject*: ask for the optional reason first.
        executeCommand: async (command, args: unknown[], next) => {
          let params: unknown = args[0];
          if (/^stet\.reject(File|All|Lines)?$/.test(command) && params && typeof params === 'object' &&
              (params as { feedback?: unknown }).feedback === undefined) {
            const ids = hunkIdsOf(params);
            const feedback = await this.askRejectFeedback(ids, command === 'stet.rejectLines' ? 'the selected lines' : undefined);
            if (feedback === undefined) return undefined; // cancelled
            if (feedback) params = { ...params, feedback };
          }
          // The server's own lenses decide too: let the views prepare (a block in the file comes down first).
          const undo = DECIDING.test(command) || /^stet\.(accept|reject)Lines$/.test(command) ? this.beforeDecide?.(hunkIdsOf(params)) : undefined;
          let result: unknown;
          try {
            result = await next(command, [params, ...args.slice(1)]);
          } catch (e) {
            undo?.();
            throw e;
          }
          // A refused call may come back as no result (the client reported the error itself).
          const r = result as { hunks?: unknown; part?: unknown } | null | undefined;
          if (!Array.isArray(r?.hunks) && !r?.part) undo?.();
          this.absorb(result, command, params);
          return result;
        },
        // VS Code learns how long lenses take and waits that long (up to a minute) before asking again after
        // every edit. A request made while the server restarts waits for the new server: seconds, which
        // would then delay every later lens update by as much. So: no server lenses while it is not
        // running, none past LENS_WAIT_MS — and a refresh when a late answer arrives.
        provideCodeLenses: async (doc, token, next) => {
          if (!client.isRunning()) return undefined;
          let late = false;
          const answer = Promise.resolve(next(doc, token));
          const timer = new Promise<undefined>((resolve) => setTimeout(() => { late = true; resolve(undefined); }, LENS_WAIT_MS));
          void answer.then(() => {
            if (late && client.isRunning()) client.getFeature(CodeLensRequest.method)?.getProvider(doc)?.onDidChangeCodeLensEmitter.fire();
          }, () => undefined);
          return Promise.race([answer, timer]);
        },
        // Problems: the server publishes every hunk as an Information diagnostic for plain LSP editors;
        // here decorations, lenses and the tree show them, so they stay out (setting). Other sources pass.
        handleDiagnostics: (uri, diagnostics, next) => {
          // The same list again changes nothing: do not make VS Code redraw markers for it.
          const key = JSON.stringify(diagnostics.map((d) => [d.range, d.message, d.severity, d.source, d.code]));
          if (this.diagnostics.get(uri.toString())?.key === key) return;
          this.diagnostics.set(uri.toString(), { uri, all: diagnostics, key });
          next(uri, visibleDiagnostics(diagnostics, hideFromProblems()));
        },
      },
    };
    const client = new LanguageClient('stet', 'Stet', serverOptions, clientOptions);
    this.client = client;
    this.ranSinceStart = false;
    this.diagnostics.clear();
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('stet.hideHunksFromProblems')) return;
        for (const { uri, all } of this.diagnostics.values()) client.diagnostics?.set(uri, visibleDiagnostics(all, hideFromProblems()));
      }),
      client.onDidChangeState((e) => {
        if (e.newState === State.Running) {
          this.ranSinceStart = true;
          this.output.appendLine(`[stet] server running (pid ${this.pid ?? '?'})`);
          this.setStatus('running');
          // Re-read every hunk, then let the lenses (held back while it was down) come from this server.
          void this.refresh().then(() => {
            // The server asks for a lens refresh after every burst of notifications, also when nothing
            // changed; each one restarts VS Code's wait before it asks for lenses, so a steady stream of
            // them (seen when a file with hunks is merely read: the server takes the read for a change)
            // keeps the lenses stale. Refresh only when the hunks really changed. Installed here, after
            // the listHunks round trip: the client's own handler is (re)installed when its features
            // initialize, which is after the Running state is announced.
            if (this.client === client) this.disposables.push(client.onRequest(CodeLensRefreshRequest.type, () => this.refreshServerLenses(client)));
            this.refreshServerLenses(client);
          });
        } else if (e.newState === State.Starting) {
          this.setStatus('starting');
        } else {
          this.setStatus('stopped');
        }
      }),
      client.onNotification('stet/hunksChanged', (p: { uri: string; hunks: HunkState[] }) => {
        if (this.model.setUri(p.uri, p.hunks ?? [])) this.refreshServerLenses(client);
      }),
      client.onNotification('stet/restored', (p: RestoredParams) => {
        void this.refresh().then(() => this.restoredEmitter.fire(p));
      }),
    );
    this.setStatus('starting');
    try {
      await client.start();
    } catch (e) {
      this.setStatus('stopped');
      this.showStartFailure(cmd, e instanceof Error ? e.message : String(e));
    }
  }

  private onClosed(cmd: ServerCommand) {
    if (!this.ranSinceStart) {
      this.model.clear();
      // It died before answering initialize: restarting would loop. Say what to fix instead.
      this.showStartFailure(cmd, 'it exited while starting; the Stet output shows why');
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < CRASH_WINDOW_MS);
    this.crashes.push(now);
    if (this.crashes.length >= MAX_CRASHES) {
      void vscode.window.showErrorMessage(
        `Stet: the review server stopped ${this.crashes.length} times in a minute; not restarting it.`,
        'Show Log', 'Restart',
      ).then((pick) => {
        if (pick === 'Show Log') this.output.show();
        if (pick === 'Restart') void this.restart();
      });
      this.model.clear();
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    // The hunks stay on screen while it restarts (views do not flash empty); the restarted server's
    // stet/listHunks replaces them all, and decisions in between are refused ("not running").
    this.output.appendLine('[stet] the server stopped; restarting it');
    this.ranSinceStart = false;
    return { action: CloseAction.Restart, handled: true };
  }

  private showStartFailure(cmd: ServerCommand, reason: string) {
    const msg = startFailureMessage(cmd, reason);
    this.output.appendLine(`[stet] ${msg}`);
    void vscode.window.showErrorMessage(msg, 'Open Settings', 'Show Log').then((pick) => {
      if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'stet.server');
      if (pick === 'Show Log') this.output.show();
    });
  }

  /** Asks VS Code to re-query the server's lenses, once per change of the hunks. */
  private refreshServerLenses(client: LanguageClient) {
    if (this.lensesAt === this.generation) return;
    this.lensesAt = this.generation;
    const feature = client.getFeature(CodeLensRequest.method);
    for (const ed of vscode.window.visibleTextEditors) {
      feature?.getProvider(ed.document)?.onDidChangeCodeLensEmitter.fire();
    }
  }

  /** Re-reads every hunk from the server: the server is the only source of truth. */
  async refresh(): Promise<void> {
    const client = this.client;
    if (!client || !client.isRunning()) return;
    try {
      const res = await client.sendRequest<{ hunks: HunkState[] }>('stet/listHunks', {});
      this.model.replaceAll(res?.hunks ?? []);
    } catch (e) {
      this.output.appendLine(`[stet] stet/listHunks failed: ${errorText(e)}`);
    }
  }

  /** Runs one of the protocol's commands (without the feedback prompt; callers ask themselves). */
  async command(command: string, params: Record<string, unknown>): Promise<HunkState[]> {
    const client = this.client;
    if (!client || !client.isRunning()) throw new Error('the Stet server is not running');
    const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [params] });
    this.absorb(result, command, params);
    return (result as { hunks?: HunkState[] } | null)?.hunks ?? [];
  }

  /**
   * Runs a command and gives its answer as it is (stet.acceptLines / stet.rejectLines answer
   * `{part, rest}`); the HunkStates in it are shown at once, like `command`'s.
   */
  async commandResult(command: string, params: Record<string, unknown>): Promise<unknown> {
    const client = this.client;
    if (!client || !client.isRunning()) throw new Error('the Stet server is not running');
    const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [params] });
    this.absorb(result, command, params);
    return result;
  }

  /** Command answers carry fresh HunkStates: show them before the notification arrives. */
  private absorb(result: unknown, command: string, params: unknown) {
    const r = result as { hunks?: unknown; part?: unknown; rest?: unknown } | null | undefined;
    const hunks = Array.isArray(r?.hunks) ? r.hunks : [r?.part, r?.rest].filter((h) => h && typeof h === 'object');
    if (!hunks.length) return;
    this.model.update(hunks as HunkState[]);
    const ids = (params as { hunkIds?: unknown } | null | undefined)?.hunkIds;
    if (DECIDING.test(command) && Array.isArray(ids)) {
      this.decidedEmitter.fire({ command, hunkIds: ids.filter((x): x is string => typeof x === 'string'), hunks: hunks as HunkState[] });
    }
  }

  /** The server process id (for logs and tests). */
  get pid(): number | undefined {
    return (this.client as unknown as { _serverProcess?: { pid?: number } } | undefined)?._serverProcess?.pid;
  }

  async restart(): Promise<void> {
    await this.stop();
    this.crashes = [];
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    for (const d of this.disposables.splice(0)) d.dispose();
    if (client) {
      try { await client.stop(2000); } catch { /* already dead */ }
    }
    this.model.clear();
    this.setStatus('stopped');
  }

  dispose(): void {
    void this.stop();
    this.statusEmitter.dispose();
    this.restoredEmitter.dispose();
    this.decidedEmitter.dispose();
  }
}
