// Finding a command like the shell would, to say "not found" clearly instead of a spawn error.
import * as fs from 'fs';
import * as path from 'path';

function isFile(p: string): boolean {
  try { return fs.statSync(p).isFile(); } catch { return false; }
}

/** The file a command runs: a path (relative to `cwd`) as is, a bare name searched on PATH. */
export function findExecutable(
  cmd: string, cwd: string | undefined, env: NodeJS.ProcessEnv = process.env, platform: string = process.platform,
): string | undefined {
  if (cmd.includes('/') || cmd.includes('\\')) {
    const p = path.isAbsolute(cmd) ? cmd : path.resolve(cwd ?? process.cwd(), cmd);
    return isFile(p) ? p : undefined;
  }
  const exts = platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const p = path.join(dir, cmd + ext);
      if (isFile(p)) return p;
    }
  }
  return undefined;
}
