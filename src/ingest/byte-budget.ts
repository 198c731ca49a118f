// Bytes an Icecast source may hold while it reads comment headers, within a total all sources
// share (docs/security.md "Icecast sources"): an endless comment header of wanted fields, in 16
// logical streams at once, used to hold about 57 MiB per source. Pure.

export class ByteBudget {
  private used = 0;

  constructor(
    readonly maxBytes: number,
    private readonly parent?: ByteBudget,
  ) {}

  /** A budget within this one: what it takes counts here too. */
  child(maxBytes: number): ByteBudget {
    return new ByteBudget(maxBytes, this);
  }

  /** Takes `bytes`, or answers which bound it would pass: this budget's ('own') or the parent's ('shared'). */
  take(bytes: number): 'taken' | 'own' | 'shared' {
    if (this.used + bytes > this.maxBytes) return 'own';
    if (this.parent && this.parent.take(bytes) !== 'taken') return 'shared';
    this.used += bytes;
    return 'taken';
  }

  give(bytes: number): void {
    const given = Math.min(bytes, this.used);
    this.used -= given;
    this.parent?.give(given);
  }

  /** Everything still taken goes back (a source that closed). */
  release(): void {
    this.give(this.used);
  }

  get usedBytes(): number {
    return this.used;
  }
}
