// The server's lifecycle as the developer sees it: start / restart, re-read, its log.
import * as vscode from 'vscode';
import { Deps } from '../deps';

export function register(ctx: vscode.ExtensionContext, deps: Deps): void {
  ctx.subscriptions.push(
    vscode.commands.registerCommand('stet.refresh', () => deps.client.refresh()),
    vscode.commands.registerCommand('stet.restartServer', () => deps.starter.restart()),
    vscode.commands.registerCommand('stet.showOutput', () => deps.output.show()),
  );
}
