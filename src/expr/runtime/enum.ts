/** .NET enum values (StringComparison.Ordinal, RegexOptions.IgnoreCase | RegexOptions.Multiline, …). */
export class CsEnum {
  constructor(
    readonly enumName: string,
    readonly value: number,
    readonly names: ReadonlyMap<number, string>,
  ) {}
  get name(): string {
    const direct = this.names.get(this.value);
    if (direct !== undefined) return direct;
    // Flags: list the set bits the way Enum.ToString does ("IgnoreCase, Multiline").
    const parts: string[] = [];
    for (const [v, n] of this.names) if (v !== 0 && (this.value & v) === v) parts.push(n);
    return parts.length ? parts.join(', ') : String(this.value);
  }
}

export interface EnumDef<M extends Record<string, number> = Record<string, number>> {
  name: string;
  /** Each member's number under its own name, for code that reads a value: `case StringComparison.members.Ordinal:`. */
  members: Readonly<M>;
  values: Map<string, CsEnum>;
  names: Map<number, string>;
}

export function makeEnum<const M extends Record<string, number>>(name: string, members: M): EnumDef<M> {
  const names = new Map<number, string>();
  for (const [k, v] of Object.entries(members)) if (!names.has(v)) names.set(v, k);
  const values = new Map<string, CsEnum>();
  for (const [k, v] of Object.entries(members)) values.set(k, new CsEnum(name, v, names));
  return { name, members, values, names };
}
