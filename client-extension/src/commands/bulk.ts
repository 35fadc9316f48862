// Deciding many hunks at once: a file, a proposal, a task, or everything pending — from the tree's inline
// buttons, the lenses inside a review, the command palette and keys. Exactly the pending hunks shown are
// decided (ids and versions), after a confirmation past `stet.confirmBulkAbove` hunks.
import * as vscode from 'vscode';
import { Deps, target } from '../deps';
import { BulkPlan, Verdict, bulkDone, bulkPlan, bulkQuestion, needsConfirmation, scopeLabel } from '../logic/bulk';
import { errorText } from '../logic/errors';
import { HunkState } from '../logic/hunk';
import { Scope, inScope, parseScopeKey } from '../logic/review';
import { parseReviewUri } from '../review';

type Kind = 'file' | 'proposal' | 'task' | 'all';

/** What a bulk command decides: a scope, narrowed (a file node under one proposal), and how to call it. */
export interface Target { scope: Scope; also?: (h: HunkState) => boolean; label: string }

const rel = (uri: string) => vscode.workspace.asRelativePath(vscode.Uri.parse(uri));

/** From an argument (tree node, review lens) or, without one, from the cursor / a quick pick. */
export async function resolveTarget(deps: Deps, kind: Kind, arg: unknown): Promise<Target | undefined> {
  const a = (arg && typeof arg === 'object' ? arg : {}) as {
    type?: string; group?: { taskId?: string | null; proposalId?: string; uri?: string }; proposalId?: string; uri?: string; scope?: string;
  };
  if (a.type === 'task' && a.group) {
    const taskId = a.group.taskId ?? null;
    if (taskId === null) return { scope: { kind: 'all' }, also: (h) => h.taskId === null, label: 'hunks without a task' };
    return { scope: { kind: 'task', taskId }, label: `task ${taskId}` };
  }
  if (a.type === 'proposal' && a.group?.proposalId) {
    return { scope: { kind: 'proposal', proposalId: a.group.proposalId }, label: `proposal ${a.group.proposalId}` };
  }
  if (a.type === 'file' && a.group?.uri) {
    const proposalId = a.proposalId;
    return { scope: { kind: 'file', uri: a.group.uri }, also: proposalId ? (h) => h.proposalId === proposalId : undefined,
      label: proposalId ? `${rel(a.group.uri)} in proposal ${proposalId}` : rel(a.group.uri) };
  }
  if (typeof a.uri === 'string') {
    // A review's file lens: that file, within the review's scope.
    const within = typeof a.scope === 'string' ? parseScopeKey(a.scope) : undefined;
    return { scope: { kind: 'file', uri: a.uri }, also: within ? (h) => inScope(h, within) : undefined, label: rel(a.uri) };
  }
  const ed = vscode.window.activeTextEditor;
  const fileUri = ed ? (parseReviewUri(ed.document.uri)?.uri ?? (ed.document.uri.scheme === 'file' ? ed.document.uri.toString() : undefined)) : undefined;
  const here = target(deps, undefined);
  switch (kind) {
    case 'all': return { scope: { kind: 'all' }, label: scopeLabel({ kind: 'all' }) };
    case 'file':
      if (!fileUri) { void vscode.window.showInformationMessage('Stet: open a file with pending hunks first.'); return undefined; }
      return { scope: { kind: 'file', uri: fileUri }, label: rel(fileUri) };
    case 'proposal': {
      const id = here?.proposalId ?? await pick(deps, 'proposal');
      return id ? { scope: { kind: 'proposal', proposalId: id }, label: `proposal ${id}` } : undefined;
    }
    case 'task': {
      const id = here?.taskId ?? await pick(deps, 'task');
      return id ? { scope: { kind: 'task', taskId: id }, label: `task ${id}` } : undefined;
    }
  }
}

/** A quick pick of the proposals (or tasks) that have pending hunks. */
async function pick(deps: Deps, what: 'proposal' | 'task'): Promise<string | undefined> {
  const counts = new Map<string, number>();
  for (const h of deps.model.all()) {
    const id = what === 'proposal' ? h.proposalId : h.taskId;
    if (h.status === 'pending' && id) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  if (!counts.size) {
    void vscode.window.showInformationMessage(`Stet: no ${what} has pending hunks.`);
    return undefined;
  }
  const items = [...counts].sort().map(([id, n]) => ({ label: id, description: `${n} pending` }));
  return (await vscode.window.showQuickPick(items, { title: `Stet: which ${what}?` }))?.label;
}

export async function decideMany(deps: Deps, verdict: Verdict, t: Target): Promise<void> {
  const plan: BulkPlan = bulkPlan(deps.model.all(), t.scope, t.also);
  if (!plan.hunks.length) {
    void vscode.window.showInformationMessage(`Stet: nothing pending in ${t.label}.`);
    return;
  }
  if (needsConfirmation(plan.hunks.length, vscode.workspace.getConfiguration('stet').get('confirmBulkAbove'))) {
    const button = `${verdict === 'accept' ? 'Accept' : 'Reject'} ${plan.hunks.length}`;
    const answer = await vscode.window.showWarningMessage(`Stet: ${bulkQuestion(verdict, plan, t.label)}`, { modal: true }, button);
    if (answer !== button) return;
  }
  const params: Record<string, unknown> = { ...plan.params };
  if (verdict === 'reject') {
    const feedback = await deps.askRejectFeedback(plan.params.hunkIds);
    if (feedback === undefined) return;
    if (feedback) params.feedback = feedback;
  }
  try {
    await deps.client.command(verdict === 'accept' ? 'stet.accept' : 'stet.reject', params);
    void vscode.window.setStatusBarMessage(`Stet: ${bulkDone(verdict, plan)}`, 5000);
  } catch (e) {
    // All or nothing: a hunk that moved on since (a new version) refuses the whole call.
    void vscode.window.showErrorMessage(`Stet: could not ${verdict} ${t.label}: ${errorText(e)} — nothing was decided; look again and retry.`);
  }
}

export function register(ctx: vscode.ExtensionContext, deps: Deps): void {
  const bulk = (verdict: Verdict, kind: Kind) => async (arg: unknown) => {
    const t = await resolveTarget(deps, kind, arg);
    if (t) await decideMany(deps, verdict, t);
  };
  ctx.subscriptions.push(
    vscode.commands.registerCommand('stet.acceptFileHunks', bulk('accept', 'file')),
    vscode.commands.registerCommand('stet.rejectFileHunks', bulk('reject', 'file')),
    vscode.commands.registerCommand('stet.acceptProposal', bulk('accept', 'proposal')),
    vscode.commands.registerCommand('stet.rejectProposal', bulk('reject', 'proposal')),
    vscode.commands.registerCommand('stet.acceptTask', bulk('accept', 'task')),
    vscode.commands.registerCommand('stet.rejectTask', bulk('reject', 'task')),
    vscode.commands.registerCommand('stet.acceptEverything', bulk('accept', 'all')),
    vscode.commands.registerCommand('stet.rejectEverything', bulk('reject', 'all')),
  );
}
