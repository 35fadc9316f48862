// Stet's hunks reach Problems as the server's Information diagnostics (source "stet") so that plain LSP
// editors can review. VS Code renders them itself (decorations, lenses, the tree): there they are noise.

export const STET_SOURCE = 'stet';

/** The diagnostics to show: without Stet's when `hide` (every other source untouched). */
export function visibleDiagnostics<T extends { source?: string }>(diagnostics: T[], hide: boolean): T[] {
  return hide ? diagnostics.filter((d) => d.source !== STET_SOURCE) : diagnostics;
}
