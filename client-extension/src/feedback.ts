// The optional reason for a rejection, asked before every stet.reject* (ours and the server's lenses).
import * as vscode from 'vscode';
import { describe } from './deps';
import { HunkModel } from './logic/model';

/** null: reject without a reason; undefined: the developer cancelled. */
export function feedbackAsker(model: HunkModel) {
  return async (hunkIds: string[], what?: string): Promise<string | null | undefined> => {
    if (!vscode.workspace.getConfiguration('stet').get<boolean>('askFeedbackOnReject', true)) return null;
    const text = await vscode.window.showInputBox({
      title: `Reject ${what ?? (hunkIds.length === 1 ? describe(model.get(hunkIds[0])) : 'these hunks')}`,
      prompt: 'Why? (optional: the agent gets this as feedback) — Enter to reject, Escape to cancel',
      placeHolder: 'Feedback for the agent (optional)',
      ignoreFocusOut: true,
    });
    return text === undefined ? undefined : text.trim() || null;
  };
}
