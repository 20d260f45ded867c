/**
 * Keeps the lines of a YAML file that an edit did not touch exactly as the operator wrote them.
 *
 * The YAML library renders a document its own way (`[courses]` becomes `[ courses ]`, quoting, spacing inside flow
 * collections), even where nothing changed. So a change is rendered twice — the file as it was, parsed and rendered
 * unchanged (`renderedBefore`), and the edited document (`renderedAfter`) — and the two renderings are compared line
 * by line: a line the edit left as it was is written as the original file has it; only added and changed lines come
 * from the library.
 */
export function keepUntouchedLines(original: string, renderedBefore: string, renderedAfter: string): string {
  const originalLines = original.split('\n');
  const beforeLines = renderedBefore.split('\n');
  const afterLines = renderedAfter.split('\n');
  const originalOf = renderedToOriginal(originalLines, beforeLines);
  if (originalOf === undefined) return renderedAfter;
  const pairs = commonLines(beforeLines, afterLines);
  if (pairs === undefined) return renderedAfter;
  const beforeOf = new Map(pairs.map(([before, after]) => [after, before]));
  return afterLines
    .map((line, index) => {
      const before = beforeOf.get(index);
      const source = before === undefined ? undefined : originalOf.get(before);
      return source === undefined ? line : originalLines[source]!;
    })
    .join('\n');
}

/**
 * Which original line each line of the unchanged rendering stands for: equal lines, and the lines of a stretch
 * that differs only in layout (as many lines on both sides) one for one. Undefined when the files are too large to
 * compare.
 */
function renderedToOriginal(original: string[], rendered: string[]): Map<number, number> | undefined {
  const pairs = commonLines(original, rendered);
  if (pairs === undefined) return undefined;
  const map = new Map<number, number>();
  let previous: readonly [number, number] = [-1, -1];
  for (const pair of [...pairs, [original.length, rendered.length] as const]) {
    const gapOriginal = pair[0] - previous[0] - 1;
    const gapRendered = pair[1] - previous[1] - 1;
    if (gapOriginal === gapRendered) {
      for (let offset = 1; offset <= gapRendered; offset++)
        map.set(previous[1] + offset, previous[0] + offset);
    }
    if (pair[1] < rendered.length) map.set(pair[1], pair[0]);
    previous = pair;
  }
  return map;
}

/** Beyond this many cells the comparison of the differing middle is not worth it: the library's rendering stands. */
const largestComparison = 4_000_000;

/**
 * The longest common subsequence of two line lists, as pairs of indexes in order. The common head and tail are
 * matched directly (an edit touches a few lines in the middle), the rest by dynamic programming.
 */
function commonLines(left: string[], right: string[]): (readonly [number, number])[] | undefined {
  let head = 0;
  while (head < left.length && head < right.length && left[head] === right[head]) head++;
  let tail = 0;
  while (
    tail < left.length - head &&
    tail < right.length - head &&
    left[left.length - 1 - tail] === right[right.length - 1 - tail]
  )
    tail++;
  const rows = left.length - head - tail;
  const columns = right.length - head - tail;
  if (rows * columns > largestComparison) return undefined;
  // lengths[i][j]: the longest common subsequence of the middles' suffixes from i and j.
  const width = columns + 1;
  const lengths = new Uint32Array((rows + 1) * width);
  for (let i = rows - 1; i >= 0; i--) {
    for (let j = columns - 1; j >= 0; j--) {
      lengths[i * width + j] =
        left[head + i] === right[head + j]
          ? lengths[(i + 1) * width + j + 1]! + 1
          : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    }
  }
  const pairs: (readonly [number, number])[] = [];
  for (let index = 0; index < head; index++) pairs.push([index, index]);
  let i = 0;
  let j = 0;
  while (i < rows && j < columns) {
    if (left[head + i] === right[head + j]) {
      pairs.push([head + i, head + j]);
      i++;
      j++;
    } else if (lengths[(i + 1) * width + j]! >= lengths[i * width + j + 1]!) i++;
    else j++;
  }
  for (let index = tail; index > 0; index--) pairs.push([left.length - index, right.length - index]);
  return pairs;
}
