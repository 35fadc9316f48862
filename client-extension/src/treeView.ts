// The "Stet" view: tasks -> proposals -> files -> hunks, straight from the model.
import * as vscode from 'vscode';
import { HunkState, Turn, isMissing, isShown, lineLabel, replacementText } from './logic/hunk';
import { HunkModel } from './logic/model';
import {
  FileGroup, ProposalGroup, TaskGroup, countsLabel, groupContext, groupHunks, hunkContext, hunkDescription, proposalLabel, relativePath, statusIcon,
} from './logic/tree';
import { filterByTurn, shortSession } from './logic/turns';

// Commands get these nodes as their argument (bulk and review commands read `group`, and `proposalId`
// on a file node: its hunks are that proposal's in that file).
export type Node =
  | { type: 'task'; group: TaskGroup }
  | { type: 'proposal'; group: ProposalGroup; taskKey: string }
  | { type: 'file'; group: FileGroup; key: string; proposalId: string }
  | { type: 'hunk'; hunk: HunkState };

const STATUS_COLOR: Record<string, string | undefined> = {
  pending: 'editorInfo.foreground',
  accepted: 'testing.iconPassed',
  applied: 'testing.iconPassed',
  rejected: 'testing.iconFailed',
  stale: 'editorWarning.foreground',
};

export class HunkTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly unsubscribe: () => void;
  /** The one turn the view shows (Show Turn…); undefined: everything. */
  turn: Turn | undefined;

  constructor(private readonly model: HunkModel) {
    this.unsubscribe = model.onDidChange(() => this.changed.fire(undefined));
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      const tasks = groupHunks(filterByTurn(this.model.all(), this.turn));
      // One task only (or none): skip a level nobody needs.
      if (tasks.length === 1 && tasks[0].taskId === null) return this.getChildren({ type: 'task', group: tasks[0] });
      return tasks.map((group) => ({ type: 'task', group }));
    }
    switch (node.type) {
      case 'task':
        return node.group.proposals.map((group) => ({ type: 'proposal', group, taskKey: node.group.taskId ?? '' }));
      case 'proposal':
        return node.group.files.map((group) => ({ type: 'file', group, key: `${node.taskKey}/${node.group.proposalId}`, proposalId: node.group.proposalId }));
      case 'file':
        return node.group.hunks.map((hunk) => ({ type: 'hunk', hunk }));
      case 'hunk':
        return [];
    }
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const expanded = (hs: HunkState[]) =>
      hs.some(isShown) ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed;
    switch (node.type) {
      case 'task': {
        const g = node.group;
        const all = g.proposals.flatMap((p) => p.files.flatMap((f) => f.hunks));
        const item = new vscode.TreeItem(g.taskId ? `Task ${g.taskId}` : 'No task', expanded(all));
        item.id = `task:${g.taskId ?? ''}`;
        item.description = countsLabel(g.counts, g.missing);
        item.iconPath = new vscode.ThemeIcon('tasklist');
        item.contextValue = groupContext('task', all);
        return item;
      }
      case 'proposal': {
        const g = node.group;
        const all = g.files.flatMap((f) => f.hunks);
        const item = new vscode.TreeItem(proposalLabel(g), expanded(all));
        item.id = `proposal:${node.taskKey}/${g.proposalId}`;
        item.description = countsLabel(g.counts, g.missing);
        const id = g.turn ? `${g.proposalId} (turn ${g.turn.number} of Claude Code session ${shortSession(g.turn.session)})` : g.proposalId;
        item.tooltip = g.message ? `${id}\n\n${g.message}` : id;
        item.iconPath = new vscode.ThemeIcon('git-pull-request');
        item.contextValue = groupContext('proposal', all);
        return item;
      }
      case 'file': {
        const g = node.group;
        const roots = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString());
        const item = new vscode.TreeItem(vscode.Uri.parse(g.uri), expanded(g.hunks));
        item.id = `file:${node.key}/${g.uri}`;
        item.label = relativePath(g.uri, roots);
        item.description = countsLabel(g.counts, g.missing);
        item.contextValue = groupContext('file', g.hunks);
        return item;
      }
      case 'hunk': {
        const h = node.hunk;
        const item = new vscode.TreeItem(lineLabel(h), vscode.TreeItemCollapsibleState.None);
        item.id = `hunk:${h.id}`;
        item.description = hunkDescription(h);
        const color = isMissing(h) ? 'editorWarning.foreground' : STATUS_COLOR[h.status];
        item.iconPath = new vscode.ThemeIcon(statusIcon(h), color ? new vscode.ThemeColor(color) : undefined);
        const tip = new vscode.MarkdownString();
        tip.appendMarkdown(`**${hunkDescription(h)}** · ${lineLabel(h)}${h.message ? `\n\n${h.message}` : ''}`);
        if (isMissing(h)) tip.appendMarkdown('\n\nAccepted and applied, then removed from the file (a checkout, an undo, another tool): re-apply it, or undo the decision to review it again.');
        if (h.feedback) tip.appendMarkdown(`\n\nFeedback: ${h.feedback}`);
        if (h.kind === 'edit') tip.appendCodeblock(diffPreview(h), 'diff');
        item.tooltip = tip;
        item.contextValue = hunkContext(h);
        item.command = { command: 'stet.revealHunk', title: 'Reveal', arguments: [node] };
        return item;
      }
    }
  }

  /** Shows one turn only (undefined: everything). */
  setTurn(turn: Turn | undefined): void {
    this.turn = turn;
    this.changed.fire(undefined);
  }

  dispose(): void {
    this.unsubscribe();
    this.changed.dispose();
  }
}

function diffPreview(h: HunkState): string {
  const lines = (t: string, sign: string) => (t === '' ? [] : t.replace(/\r?\n$/, '').split(/\r?\n/).map((l) => sign + l));
  return [...lines(h.oldText, '-'), ...lines(replacementText(h), '+')].slice(0, 30).join('\n');
}
