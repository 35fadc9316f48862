// Whether to start the server now: in "auto" mode only where Stet is in use (a folder has .stet/),
// so opening any folder does not spawn a Python process that creates .stet/ there.

export type StartMode = 'auto' | 'always';

export function shouldStart(mode: unknown, folderHasStore: boolean[], storeConfigured = false): boolean {
  // A store named in the settings (stet.server.db: a shared PostgreSQL review) is Stet in use too.
  if (mode === 'always' || storeConfigured) return true;
  return folderHasStore.some(Boolean);
}
