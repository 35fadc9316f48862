// One turn at a time: *Show Turn…* narrows the Stet view to the hunks one turn of Claude Code made (the
// hooks' captures carry it), *Show All Turns* widens it again, and *Review Turn…* opens the all-changes
// view of one turn — so the developer reviews a turn while the agent goes on with the next.
import * as vscode from 'vscode';
import { Deps } from '../deps';
import { Turn } from '../logic/hunk';
import { TurnSummary, sameTurn, turnLabel, turnsOf } from '../logic/turns';
import { review } from './review';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function register(ctx: vscode.ExtensionContext, deps: Deps): void {
  const { model, tree, treeView } = deps;

  /** A quick pick of the turns the hunks carry (`all`: with an "All turns" entry first). */
  const pickTurn = async (title: string, all: boolean, only?: (s: TurnSummary) => boolean): Promise<Turn | null | undefined> => {
    const turns = turnsOf(model.all()).filter(only ?? (() => true));
    if (!turns.length) {
      void vscode.window.showInformationMessage('Stet: no hunk here comes from an agent\'s turn (Claude Code\'s hooks record them).');
      return undefined;
    }
    type Item = vscode.QuickPickItem & { turn: Turn | null };
    const items: Item[] = turns.map((s) => ({
      label: `Turn ${s.turn.number}`,
      description: `session ${s.turn.session.slice(0, 8)} · ${s.pending ? `${s.pending} pending` : 'nothing pending'} of ${plural(s.total, 'hunk')}`,
      detail: s.message ?? undefined,
      picked: sameTurn(s.turn, tree.turn),
      turn: s.turn,
    }));
    if (all) items.unshift({ label: 'All turns', description: 'everything, with or without a turn', turn: null });
    const picked = await vscode.window.showQuickPick(items, { title, matchOnDescription: true, matchOnDetail: true });
    return picked ? picked.turn : undefined;
  };

  const showTurn = (turn: Turn | undefined) => {
    tree.setTurn(turn);
    void vscode.commands.executeCommand('setContext', 'stet.turnFiltered', Boolean(turn));
    describeFilter();
  };

  /** The view says which turn it shows and how much of it is pending. */
  const describeFilter = () => {
    const turn = tree.turn;
    if (!turn) {
      treeView.message = undefined;
      return;
    }
    const s = turnsOf(model.all()).find((x) => sameTurn(x.turn, turn));
    treeView.message = `Showing ${turnLabel(turn)}: ${s ? `${s.pending} pending of ${plural(s.total, 'hunk')}` : 'no hunks'}. Show All Turns (title bar) shows everything.`;
  };

  let hadTurns: boolean | undefined;
  const updateContext = () => {
    const has = turnsOf(model.all()).length > 0;
    if (has !== hadTurns) void vscode.commands.executeCommand('setContext', 'stet.hasTurns', (hadTurns = has));
    describeFilter();
  };

  ctx.subscriptions.push(
    vscode.commands.registerCommand('stet.showTurn', async () => {
      const turn = await pickTurn('Stet: show which turn?', true);
      if (turn !== undefined) showTurn(turn ?? undefined);
    }),
    vscode.commands.registerCommand('stet.showAllTurns', () => showTurn(undefined)),
    vscode.commands.registerCommand('stet.reviewTurn', async (arg: unknown) => {
      // A proposal row of a turn, else the turn the view shows, else the developer picks one.
      const fromRow = (arg as { type?: string; group?: { turn?: Turn | null } } | undefined)?.group?.turn ?? undefined;
      const turn = fromRow ?? tree.turn ?? (await pickTurn('Stet: review which turn?', false, (s) => s.pending > 0)) ?? undefined;
      if (turn) await review(deps, { kind: 'turn', session: turn.session, number: turn.number }, turnLabel(turn));
    }),
    { dispose: model.onDidChange(() => updateContext()) },
  );
  updateContext();
}
