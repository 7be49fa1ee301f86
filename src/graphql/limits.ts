import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  type ASTVisitor,
  type GraphQLNamedType,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

/**
 * Depth and cost limits (CONTRACT 12), as graphql-js validation rules: Apollo runs them after
 * parsing and before execution, so an abusive query costs one parse and one walk, no SQL.
 *
 * Depth counts field nesting (`{ posts { data { id } } }` is 3). Cost is an estimate of how
 * many values the answer may hold: every field costs 1 plus what it selects, and a field that
 * returns a list multiplies that by LIST_FACTOR (a page holds up to a few dozen items; nested
 * lists multiply). Aliases count once per alias, so repeating a field under many names is
 * priced like the work it causes. Introspection fields (`__schema`, `__type`, `__typename`) are
 * not counted: their answer is bounded by the schema, and introspection is off in production.
 */
export const LIMITS = { maxDepth: 8, maxCost: 5000, listFactor: 10 } as const;

interface Walk {
  depth: number;
  cost: number;
}

function walk(
  ctx: ValidationContext,
  selectionSet: SelectionSetNode,
  parent: GraphQLNamedType | undefined,
  level: number,
  seenFragments: Set<string>,
): Walk {
  let depth = level - 1;
  let cost = 0;
  for (const sel of selectionSet.selections) {
    if (sel.kind === 'Field') {
      if (sel.name.value.startsWith('__')) continue;
      let child: GraphQLNamedType | undefined;
      let list = false;
      if (parent && (isObjectType(parent) || isInterfaceType(parent))) {
        const def = parent.getFields()[sel.name.value];
        if (def) {
          child = getNamedType(def.type);
          list = isListType(getNullableType(def.type));
        }
      }
      const inner = sel.selectionSet ? walk(ctx, sel.selectionSet, child, level + 1, seenFragments) : { depth: level, cost: 0 };
      depth = Math.max(depth, inner.depth);
      cost += (1 + inner.cost) * (list ? LIMITS.listFactor : 1);
    } else if (sel.kind === 'InlineFragment') {
      const typed = sel.typeCondition ? ctx.getSchema().getType(sel.typeCondition.name.value) ?? parent : parent;
      const inner = walk(ctx, sel.selectionSet, typed, level, seenFragments);
      depth = Math.max(depth, inner.depth);
      cost += inner.cost;
    } else {
      const name = sel.name.value;
      const fragment = ctx.getFragment(name);
      // A fragment cycle is reported by graphql's own NoFragmentCycles rule; here it only must not loop.
      if (!fragment || seenFragments.has(name)) continue;
      const typed = ctx.getSchema().getType(fragment.typeCondition.name.value) ?? parent;
      const inner = walk(ctx, fragment.selectionSet, typed, level, new Set(seenFragments).add(name));
      depth = Math.max(depth, inner.depth);
      cost += inner.cost;
    }
    // Past the limits the exact figure no longer matters; stop before a hostile query makes it huge.
    if (cost > LIMITS.maxCost * LIMITS.listFactor) break;
  }
  return { depth, cost };
}

function rootType(ctx: ValidationContext, op: OperationDefinitionNode): GraphQLNamedType | undefined {
  const schema = ctx.getSchema();
  if (op.operation === 'query') return schema.getQueryType() ?? undefined;
  if (op.operation === 'mutation') return schema.getMutationType() ?? undefined;
  return schema.getSubscriptionType() ?? undefined;
}

function limitError(message: string, op: OperationDefinitionNode): GraphQLError {
  return new GraphQLError(message, { nodes: [op], extensions: { code: 'BAD_USER_INPUT' } });
}

/** Rejects an operation nested deeper than LIMITS.maxDepth. */
export const depthLimitRule: ValidationRule = (ctx: ValidationContext): ASTVisitor => ({
  OperationDefinition(op) {
    const { depth } = walk(ctx, op.selectionSet, rootType(ctx, op), 1, new Set());
    if (depth > LIMITS.maxDepth) {
      ctx.reportError(limitError(`Query is too deep: depth ${depth} exceeds the limit of ${LIMITS.maxDepth}`, op));
    }
  },
});

/** Rejects an operation whose estimated cost exceeds LIMITS.maxCost. */
export const costLimitRule: ValidationRule = (ctx: ValidationContext): ASTVisitor => ({
  OperationDefinition(op) {
    const { cost } = walk(ctx, op.selectionSet, rootType(ctx, op), 1, new Set());
    if (cost > LIMITS.maxCost) {
      ctx.reportError(limitError(`Query is too complex: estimated cost exceeds the limit of ${LIMITS.maxCost}`, op));
    }
  },
});

export const limitRules: ValidationRule[] = [depthLimitRule, costLimitRule];
