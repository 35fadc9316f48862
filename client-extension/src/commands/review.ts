// Opening the review surface (review.ts) for a file, a proposal, a task or everything pending, and the
// lenses that put Accept / Reject… / Edit… inside it.
import * as vscode from 'vscode';
import { Deps } from '../deps';
import { errorText } from '../logic/errors';
import { Scope, scopeKey } from '../logic/review';
import { REVIEW_SCHEME, ReviewLenses, openReview } from '../review';
import { resolveTarget } from './bulk';

type Kind = 'file' | 'proposal' | 'task' | 'all';

export async function review(deps: Deps, scope: Scope, label: string): Promise<void> {
  try {
    if (!(await openReview(deps.model, scope))) void vscode.window.showInformationMessage(`Stet: nothing pending in ${label}.`);
  } catch (e) {
    void vscode.window.showErrorMessage(`Stet: could not open the review of ${label} (${scopeKey(scope)}): ${errorText(e)}`);
  }
}

export function register(ctx: vscode.ExtensionContext, deps: Deps, latestProposal: () => string | undefined): void {
  const open = (kind: Kind) => async (arg: unknown) => {
    const t = await resolveTarget(deps, kind, arg);
    if (t) await review(deps, t.scope, t.label);
  };
  ctx.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, deps.review),
    vscode.languages.registerCodeLensProvider({ scheme: REVIEW_SCHEME }, new ReviewLenses(deps.review)),
    vscode.commands.registerCommand('stet.reviewFile', open('file')),
    vscode.commands.registerCommand('stet.reviewProposal', open('proposal')),
    vscode.commands.registerCommand('stet.reviewTask', open('task')),
    vscode.commands.registerCommand('stet.reviewAll', open('all')),
    vscode.commands.registerCommand('stet.reviewLatestProposal', () => {
      const id = latestProposal();
      if (id) return review(deps, { kind: 'proposal', proposalId: id }, `proposal ${id}`);
      return review(deps, { kind: 'all' }, 'everything pending');
    }),
  );
}
