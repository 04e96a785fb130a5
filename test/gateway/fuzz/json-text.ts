// Request bodies as JSON text, with pieces JSON.stringify cannot write: a
// `"__proto__"` key (an object literal's __proto__ sets the prototype and is never
// emitted), numbers beyond a double (1e400), and nesting deep enough to overflow
// any recursive walker (stringifying it would overflow ours).

/** JSON text placed as is. `poisoned`: it holds a prototype-polluting key. */
export class Raw {
  constructor(
    readonly text: string,
    readonly poisoned = false,
  ) {}
}

export interface JsonText {
  text: string;
  /** Somewhere in it is a `__proto__` key or a `constructor.prototype` pair. */
  poisoned: boolean;
}

/** Serializes a shallow value that may hold Raw pieces anywhere. */
export function toJsonText(value: unknown): JsonText {
  let poisoned = false;
  const write = (v: unknown): string => {
    if (v instanceof Raw) {
      poisoned ||= v.poisoned;
      return v.text;
    }
    if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
    if (v !== null && typeof v === 'object') {
      return `{${Object.entries(v)
        .map(([k, item]) => `${JSON.stringify(k)}:${write(item)}`)
        .join(',')}}`;
    }
    return JSON.stringify(v) ?? 'null';
  };
  const text = write(value);
  return { text, poisoned };
}

const DEEP = 10_000;
/** Big pieces are built once: they are reused by many cases. */
export const BIG = {
  deepArray: new Raw('['.repeat(DEEP) + ']'.repeat(DEEP)),
  deepObject: new Raw(`${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`),
  // Under the 1 MiB body limit, so they reach validation: 100,000 items fail one by one.
  manyObjects: new Raw(`[${new Array(100_000).fill('{}').join(',')}]`),
  manyNumbers: new Raw(`[${new Array(100_000).fill('7').join(',')}]`),
  longString: 'x'.repeat(200_000),
};

export const POISON = {
  proto: new Raw('{"__proto__":{"isAdmin":true,"roles":["platform_admin"]}}', true),
  constructorPrototype: new Raw('{"constructor":{"prototype":{"isAdmin":true}}}', true),
};

/** `{"__proto__": …, <the fields of body>}`: the poisoned key next to a body that is otherwise valid. */
export function withProtoKey(body: Record<string, unknown>, key: '__proto__' | 'constructor'): Raw {
  const payload = key === '__proto__' ? '{"isAdmin":true,"status":"active"}' : '{"prototype":{"isAdmin":true}}';
  const rest = toJsonText(body).text.slice(1);
  return new Raw(`{"${key}":${payload}${rest === '}' ? '}' : `,${rest}`}`, true);
}
