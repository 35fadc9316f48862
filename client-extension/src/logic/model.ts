// The extension's copy of the server's hunks: replaced wholesale by stet/listHunks, per uri by
// stet/hunksChanged. It only mirrors the server; it never decides anything itself.
import { HunkState, countByStatus, Counts, isOpen } from './hunk';

export type Normalize = (uri: string) => string;

export class HunkModel {
  private byUri = new Map<string, HunkState[]>();
  private listeners: Array<(uris: string[], full: boolean) => void> = [];

  /** `normalize` maps a uri to the form the editor uses, so server and editor uris compare equal. */
  constructor(private readonly normalize: Normalize = (u) => u) {}

  /** Called with the uris whose hunks changed (all known uris, and `full`, on a full replace or clear). */
  onDidChange(listener: (uris: string[], full: boolean) => void): () => void {
    this.listeners.push(listener);
    return () => { this.listeners = this.listeners.filter((l) => l !== listener); };
  }

  /** Replace everything (after stet/listHunks with no filter). */
  replaceAll(hunks: HunkState[]): void {
    const before = [...this.byUri.keys()];
    this.byUri.clear();
    for (const h of hunks) {
      const n = this.normalized(h);
      const list = this.byUri.get(n.uri);
      if (list) list.push(n);
      else this.byUri.set(n.uri, [n]);
    }
    this.emit([...new Set([...before, ...this.byUri.keys()])], true);
  }

  /**
   * Replace one uri's list (stet/hunksChanged carries the full list for that uri). A list equal to the one
   * held changes nothing and tells no one: views do not redraw (and re-read files) for a repeated notice.
   * Returns whether anything changed.
   */
  setUri(uri: string, hunks: HunkState[]): boolean {
    const key = this.normalize(uri);
    const list = hunks.map((h) => this.normalized(h));
    if (JSON.stringify(list) === JSON.stringify(this.byUri.get(key) ?? [])) return false;
    // Hunks of a rename/create may name a different uri than the notification; keep them under their own.
    if (list.length) this.byUri.set(key, list);
    else this.byUri.delete(key);
    this.emit([key]);
    return true;
  }

  /** Merge hunks from a command's answer (fresher than what we have until the notification comes). */
  update(hunks: HunkState[]): void {
    const touched = new Set<string>();
    for (const raw of hunks) {
      const h = this.normalized(raw);
      const list = this.byUri.get(h.uri) ?? [];
      const i = list.findIndex((x) => x.id === h.id);
      if (i >= 0) {
        if (list[i].version > h.version) continue;
        list[i] = h;
      } else list.push(h);
      this.byUri.set(h.uri, list);
      touched.add(h.uri);
    }
    if (touched.size) this.emit([...touched]);
  }

  clear(): void {
    const before = [...this.byUri.keys()];
    this.byUri.clear();
    if (before.length) this.emit(before, true);
  }

  forUri(uri: string): HunkState[] {
    return this.byUri.get(this.normalize(uri)) ?? [];
  }

  get(id: string): HunkState | undefined {
    for (const list of this.byUri.values()) {
      const h = list.find((x) => x.id === id);
      if (h) return h;
    }
    return undefined;
  }

  all(): HunkState[] {
    return [...this.byUri.values()].flat();
  }

  uris(): string[] {
    return [...this.byUri.keys()];
  }

  counts(): Counts {
    return countByStatus(this.all());
  }

  openCount(): number {
    return this.all().filter(isOpen).length;
  }

  private normalized(h: HunkState): HunkState {
    return { ...h, uri: this.normalize(h.uri) };
  }

  private emit(uris: string[], full = false): void {
    for (const l of this.listeners) l(uris, full);
  }
}
