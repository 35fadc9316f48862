// `stet.requestChanges`: the editor's switch for request changes, kept in each checkout's git config
// (`stet.requestChanges`), which the agent's end-of-turn hook reads and which wins over the
// `--request-changes` that `stet integrate` wrote.

export type RequestChanges = 'default' | 'on' | 'off';

export const GIT_KEY = 'stet.requestChanges';

/** The setting as read (anything else than "on" or "off" is "default"). */
export function requestChangesValue(value: unknown): RequestChanges {
  return value === 'on' || value === 'off' ? value : 'default';
}

/** The git arguments that make `folder`'s checkout say what the setting says: true or false, or
 * the key unset ("default": the hook's --request-changes decides). */
export function requestChangesGitArgs(value: unknown, folder: string): string[] {
  const v = requestChangesValue(value);
  const base = ['-C', folder, 'config', '--local'];
  return v === 'default' ? [...base, '--unset', GIT_KEY] : [...base, GIT_KEY, v === 'on' ? 'true' : 'false'];
}

/** Whether git's exit code is no failure: `--unset` of a key that is not set exits 5. */
export function gitConfigDone(args: string[], code: number): boolean {
  return code === 0 || (code === 5 && args.includes('--unset'));
}
