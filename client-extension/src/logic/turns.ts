// Turns: the hunks Stet captured from Claude Code's hooks carry the session and the number of the turn
// (one prompt and the agent's answer to it) that made them, so the developer can review one turn while
// the agent goes on with the next. Hunks without a turn (proposals, other agents) belong to none.
import { HunkState, Turn } from './hunk';

export function sameTurn(a: Turn | null | undefined, b: Turn | null | undefined): boolean {
  return Boolean(a && b && a.session === b.session && a.number === b.number);
}

/** Is `turn` a well-formed turn (a server may send anything in an optional field)? */
export function isTurn(turn: unknown): turn is Turn {
  const t = turn as Turn | null | undefined;
  return Boolean(t) && typeof t?.session === 'string' && typeof t?.number === 'number';
}

export function inTurn(h: HunkState, turn: Turn): boolean {
  return isTurn(h.turn) && sameTurn(h.turn, turn);
}

/** The first characters of a session id: enough to tell sessions apart in a list. */
export function shortSession(session: string): string {
  return session.length > 8 ? session.slice(0, 8) : session;
}

/** "turn 3 of session 1a2b3c4d" */
export function turnLabel(turn: Turn): string {
  return `turn ${turn.number} of session ${shortSession(turn.session)}`;
}

/** One turn and what it holds. */
export interface TurnSummary { turn: Turn; pending: number; total: number; message: string | null }

/** The turns the hunks carry: per session (sessions by id), the latest turn first. */
export function turnsOf(hunks: HunkState[]): TurnSummary[] {
  const byKey = new Map<string, TurnSummary>();
  for (const h of hunks) {
    if (!isTurn(h.turn)) continue;
    const key = JSON.stringify([h.turn.session, h.turn.number]);
    const s = byKey.get(key) ?? { turn: { session: h.turn.session, number: h.turn.number }, pending: 0, total: 0, message: null };
    s.total++;
    if (h.status === 'pending') s.pending++;
    s.message ??= h.message;
    byKey.set(key, s);
  }
  return [...byKey.values()].sort((a, b) =>
    (a.turn.session < b.turn.session ? -1 : a.turn.session > b.turn.session ? 1 : 0) || b.turn.number - a.turn.number);
}

/** What the view shows under a turn filter: the hunks of that turn; without a filter, all. */
export function filterByTurn(hunks: HunkState[], turn: Turn | undefined): HunkState[] {
  return turn ? hunks.filter((h) => inTurn(h, turn)) : hunks;
}
