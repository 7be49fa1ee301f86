import type { GraphQLResolveInfo, SelectionSetNode } from 'graphql';

/**
 * Whether the current field's selection, below `path` (e.g. `['data']` for a page), asks for any
 * of `names`, through fragments too. Resolvers use it to read an embed for a whole list ahead of
 * its field resolvers (one batch either way) only when the query wants it.
 */
export function selects(info: GraphQLResolveInfo, path: readonly string[], names: readonly string[]): boolean {
  const walk = (set: SelectionSetNode | undefined, depth: number): boolean => {
    if (!set) return false;
    for (const sel of set.selections) {
      if (sel.kind === 'Field') {
        if (depth === path.length ? names.includes(sel.name.value) : sel.name.value === path[depth] && walk(sel.selectionSet, depth + 1)) return true;
      } else if (sel.kind === 'InlineFragment') {
        if (walk(sel.selectionSet, depth)) return true;
      } else if (walk(info.fragments[sel.name.value]?.selectionSet, depth)) {
        return true;
      }
    }
    return false;
  };
  return info.fieldNodes.some((n) => walk(n.selectionSet, 0));
}
