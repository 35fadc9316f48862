// Starts and keeps the Stet language server: restarts it when it dies, re-reads the hunks from it.
import * as vscode from 'vscode';
import {
  CloseAction, CodeLensRequest, ErrorAction, ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, State,
} from 'vscode-languageclient/node';
import { HunkState } from './logic/hunk';
import { HunkModel } from './logic/model';
import { findExecutable } from './logic/which';
import { ServerCommand, commandLine, serverCommand, startFailureMessage } from './logic/settings';
import { errorText } from './logic/errors';

/** Crashes within this window before we stop restarting (a server that dies at once, in a loop). */
const CRASH_WINDOW_MS = 60_000;
const MAX_CRASHES = 5;

export interface RestoredParams { files: number; counts: Record<string, number>; durationMs: number; error?: string }

export type Status = 'starting' | 'running' | 'stopped';

export class StetClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private crashes: number[] = [];
  private ranSinceStart = false;
  private readonly statusEmitter = new vscode.EventEmitter<Status>();
  readonly onStatus = this.statusEmitter.event;
  private readonly restoredEmitter = new vscode.EventEmitter<RestoredParams>();
  /** stet/restored, once the hunks have been re-read. */
  readonly onRestored = this.restoredEmitter.event;
  status: Status = 'stopped';
  private disposables: vscode.Disposable[] = [];

  constructor(
    private readonly model: HunkModel,
    private readonly output: vscode.OutputChannel,
    private readonly askRejectFeedback: (hunkIds: string[]) => Promise<string | null | undefined>,
  ) {}

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
    this.output.appendLine(`[stet] starting ${commandLine(cmd)}${cwd ? ` in ${cwd}` : ''}`);
    const serverOptions: ServerOptions = { command: cmd.command, args: cmd.args, options: { cwd } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => this.onClosed(cmd),
      },
      middleware: {
        // The server's "Reject…" lenses and code actions run stet.reject*: ask for the optional reason first.
        executeCommand: async (command, args: unknown[], next) => {
          let params: unknown = args[0];
          if (/^stet\.reject(File|All)?$/.test(command) && params && typeof params === 'object' &&
              (params as { feedback?: unknown }).feedback === undefined) {
            const ids = (params as { hunkIds?: unknown }).hunkIds;
            const feedback = await this.askRejectFeedback(Array.isArray(ids) ? ids.filter((x): x is string => typeof x === 'string') : []);
            if (feedback === undefined) return undefined; // cancelled
            if (feedback) params = { ...params, feedback };
          }
          const result: unknown = await next(command, [params, ...args.slice(1)]);
          this.absorb(result);
          return result;
        },
      },
    };
    const client = new LanguageClient('stet', 'Stet', serverOptions, clientOptions);
    this.client = client;
    this.ranSinceStart = false;
    this.disposables.push(
      client.onDidChangeState((e) => {
        if (e.newState === State.Running) {
          this.ranSinceStart = true;
          this.output.appendLine(`[stet] server running (pid ${this.pid ?? '?'})`);
          this.setStatus('running');
          void this.refresh();
        } else if (e.newState === State.Starting) {
          this.setStatus('starting');
        } else {
          this.setStatus('stopped');
        }
      }),
      client.onNotification('stet/hunksChanged', (p: { uri: string; hunks: HunkState[] }) => {
        this.model.setUri(p.uri, p.hunks ?? []);
        this.refreshServerLenses(client);
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
    this.model.clear();
    if (!this.ranSinceStart) {
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
      return { action: CloseAction.DoNotRestart, handled: true };
    }
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

  /** Asks VS Code to re-query the server's lenses, in case the server sends no workspace/codeLens/refresh. */
  private refreshServerLenses(client: LanguageClient) {
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
    this.absorb(result);
    return (result as { hunks?: HunkState[] } | null)?.hunks ?? [];
  }

  /** Command answers carry fresh HunkStates: show them before the notification arrives. */
  private absorb(result: unknown) {
    const hunks = (result as { hunks?: unknown } | null | undefined)?.hunks;
    if (Array.isArray(hunks)) this.model.update(hunks as HunkState[]);
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
  }
}
