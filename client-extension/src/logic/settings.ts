// Which command starts the server, and what to tell the developer when it cannot start.
import * as path from 'path';

export interface ServerSettings {
  command?: unknown;
  python?: unknown;
}

export interface ServerCommand { command: string; args: string[]; source: 'stet.server.python' | 'stet.server.command' }

export const DEFAULT_COMMAND = ['stet', 'serve'];

/** `stet.server.python` wins when set; else `stet.server.command`; a malformed command falls back to the default. */
export function serverCommand(s: ServerSettings): ServerCommand {
  if (typeof s.python === 'string' && s.python.trim() !== '') {
    return { command: s.python.trim(), args: ['-m', 'stet', 'serve'], source: 'stet.server.python' };
  }
  const cmd = Array.isArray(s.command) && s.command.length > 0 && s.command.every((x) => typeof x === 'string' && x !== '')
    ? (s.command as string[])
    : DEFAULT_COMMAND;
  return { command: cmd[0], args: cmd.slice(1), source: 'stet.server.command' };
}

/** `stet.server.db`: the store this window's server opens (initializationOptions.db), or undefined
 * for the server's own choice (STET_DB, else the folder's .stet/stet.db). A postgresql:// url is
 * passed as it is; a relative path is the first folder's. */
export function storeOption(db: unknown, folder: string | undefined): string | undefined {
  if (typeof db !== 'string' || db.trim() === '') return undefined;
  const value = db.trim();
  if (/^postgres(ql)?:\/\//.test(value) || path.isAbsolute(value) || folder === undefined) return value;
  return path.join(folder, value);
}

/** A url as the output channel may show it: without a password. */
export function masked(db: string): string {
  return db.replace(/^(postgres(?:ql)?:\/\/[^:/@\s]*:)[^@\s]*@/, '$1***@').replace(/(password=)[^&\s]+/g, '$1***');
}

export function commandLine(c: ServerCommand): string {
  return [c.command, ...c.args].map((p) => (/\s/.test(p) ? JSON.stringify(p) : p)).join(' ');
}

/** The error shown when the server cannot start: what failed and which setting fixes it. */
export function startFailureMessage(c: ServerCommand, reason: string): string {
  const what = `Stet: could not start the review server \`${commandLine(c)}\` (${reason}).`;
  if (c.source === 'stet.server.python') {
    return `${what} Check that "stet.server.python" points to a Python where Stet is installed (pip install stet-lsp), or clear it and set "stet.server.command".`;
  }
  return `${what} Install Stet (pip install stet-lsp) so \`stet\` is on the PATH of VS Code, or set "stet.server.python" to a Python that has it (e.g. your project's .venv/bin/python), or "stet.server.command" to the full command.`;
}

/** "Restored review: 2 pending, 1 accepted" (stale added when there are any). */
export function restoredMessage(counts: Record<string, number>): string {
  const pending = counts.pending ?? 0;
  const accepted = counts.accepted ?? 0;
  const stale = counts.stale ?? 0;
  return `Restored review: ${pending} pending, ${accepted} accepted` + (stale ? `, ${stale} stale` : '');
}
