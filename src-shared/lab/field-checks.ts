// Small checks for values from an untrusted side, shared by the command
// validator and the topology config parser. Each names the field it checks
// (`where`) and throws through `fail`, so each caller keeps its own error type.
export type Plain = Record<string, unknown>;
export type Fail = (field: string, message: string) => never;

export function isPlainObject(v: unknown): v is Plain {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export function onlyKeys(fail: Fail, obj: Plain, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) fail(where, `${where}: unknown field '${key}'`);
  }
}

export function int(fail: Fail, v: unknown, where: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(where, `${where} must be an integer`);
  if (v < min || v > max) fail(where, `${where} must be between ${min} and ${max}`);
  return v;
}

export function oneOf<T extends string>(fail: Fail, v: unknown, where: string, values: readonly T[]): T {
  if (typeof v !== 'string' || !values.includes(v as T))
    fail(where, `${where} must be one of ${values.join(', ')}`);
  return v as T;
}

export function bool(fail: Fail, v: unknown, where: string): boolean {
  if (typeof v !== 'boolean') fail(where, `${where} must be true or false`);
  return v;
}
