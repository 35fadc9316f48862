// A new proposal does not arrive silently: the status item pulses and, unless turned off, a notification
// says who proposed how much, with a button that opens the proposal's review.
import * as vscode from 'vscode';
import { HunkModel } from './logic/model';
import { NewProposal, ProposalTracker, noticeText } from './logic/notice';
import { StatusView } from './status';

const SETTLE_MS = 400; // a proposal's files arrive as one stet/hunksChanged each: count them together

export class ProposalNotifier implements vscode.Disposable {
  private readonly tracker = new ProposalTracker();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly unsubscribe: () => void;
  /** The last proposal announced (the status item's click and stet.reviewLatestProposal open it). */
  latest: string | undefined;

  constructor(
    private readonly model: HunkModel,
    private readonly status: StatusView,
    private readonly review: (proposalId: string) => Thenable<unknown>,
  ) {
    this.unsubscribe = model.onDidChange((_uris, full) => {
      if (full) {
        // A reload (server start, refresh): what is there is known; the restored notification speaks for it.
        this.tracker.prime(model.all());
        return;
      }
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => { this.timer = undefined; this.announce(this.tracker.observe(model.all())); }, SETTLE_MS);
    });
  }

  private announce(fresh: NewProposal[]): void {
    for (const p of fresh) {
      const text = noticeText(p);
      this.latest = p.proposalId;
      this.status.pulse(text);
      if (!vscode.workspace.getConfiguration('stet').get<boolean>('notifyOnNewProposal', true)) continue;
      void vscode.window.showInformationMessage(`Stet: ${text}`, 'Review', 'Don\u2019t Show Again').then((pick) => {
        if (pick === 'Review') void this.review(p.proposalId);
        if (pick === 'Don\u2019t Show Again') {
          void vscode.workspace.getConfiguration('stet').update('notifyOnNewProposal', false, vscode.ConfigurationTarget.Global);
        }
      });
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.unsubscribe();
  }
}
