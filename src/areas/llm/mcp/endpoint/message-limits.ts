// What the endpoint refuses before a message reaches the SDK or any upstream: tool
// arguments over 1 MiB or nested deeper than 32 levels, and any message nested so
// deep that validating it could exhaust the stack. Measured without recursion, so a
// hostile body of a million `[` costs a loop, not a crash.
export const MAX_ARGUMENT_BYTES = 1024 * 1024;
export const MAX_ARGUMENT_DEPTH = 32;
/** The arguments' 32 levels plus the envelope around them (message, params, _meta…), with room to spare. */
export const MAX_MESSAGE_DEPTH = 48;

/** How deeply objects and arrays nest in `value` (a scalar is 0, `{}` is 1); stops counting past `limit`. */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, level]);
  }
  return deepest;
}

/** Why a tool call's arguments are refused, or undefined when they are within the limits. */
export function argumentsRefusal(args: unknown): string | undefined {
  if (args === undefined) return undefined;
  const depth = nestingDepth(args, MAX_ARGUMENT_DEPTH);
  // The arguments object itself is the first level.
  if (depth > MAX_ARGUMENT_DEPTH) return `The tool arguments are nested deeper than ${MAX_ARGUMENT_DEPTH} levels.`;
  if (Buffer.byteLength(JSON.stringify(args)) > MAX_ARGUMENT_BYTES)
    return `The tool arguments are larger than ${MAX_ARGUMENT_BYTES} bytes (1 MiB) of JSON.`;
  return undefined;
}
