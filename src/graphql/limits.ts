import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  type ASTNode,
  type ASTVisitor,
  type FieldNode,
  type GraphQLNamedType,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

/**
 * Depth, cost, alias and account-mutation limits, as graphql-js validation rules:
 * Apollo runs them after parsing and before execution, so an abusive query costs one parse and
 * one walk, no SQL, no bcrypt, no mail.
 *
 * Written here rather than taken from GraphQL Armor: its max-aliases rule throws an uncoded
 * `Syntax Error: ...` by default, counts per operation rather than per document, and nothing in
 * Armor limits chosen root fields (the account mutations); this walk already follows fragments
 * with the cycle guard and visit budget the other limits need, so counting aliases is one line.
 *
 * Depth counts field nesting (`{ posts { data { id } } }` is 3). Cost is an estimate of how
 * many values the answer may hold: every field costs 1 plus what it selects, and a field that
 * returns a list multiplies that by LIST_FACTOR (a page holds up to a few dozen items; nested
 * lists multiply). Aliases count once per alias, so repeating a field under many names is
 * priced like the work it causes. Introspection fields (`__schema`, `__type`, `__typename`) are
 * not priced: their answer is bounded by the schema, and introspection is off in production. Their
 * aliases still count against maxAliases: 30 `__typename`s are harmless, 3000 are not a query.
 */
export const LIMITS = { maxDepth: 8, maxCost: 5000, listFactor: 10, maxAliases: 30, maxAccountMutations: 1 } as const;

/**
 * Each of these spends a bcrypt hash, a mail or a token check: a document may hold one,
 * or a single request could register 40 accounts and spend seconds of the shared bcrypt pool.
 */
const ACCOUNT_MUTATIONS: ReadonlySet<string> = new Set(['register', 'login', 'forgotPassword', 'resetPassword', 'verifyEmail', 'resendVerification', 'changePassword']);

/**
 * Selections one walk may visit. Every field but `__typename` costs at least 1, so a query within
 * the cost limit visits at most a few times maxCost; only fragments spread into fragments get here
 * (30 of them, each spreading the next twice, once took hours of validation).
 */
const MAX_VISITS = 4 * LIMITS.maxCost;

interface Walk {
  depth: number;
  cost: number;
  aliases: number;
}

function walk(
  ctx: ValidationContext,
  selectionSet: SelectionSetNode,
  parent: GraphQLNamedType | undefined,
  level: number,
  seenFragments: Set<string>,
  visits = { n: 0 },
): Walk {
  let depth = level - 1;
  let cost = 0;
  let aliases = 0;
  for (const sel of selectionSet.selections) {
    // Fragments spread into fragments repeat work exponentially while `__typename`s cost nothing:
    // past this many selections the document is too complex, whatever it selects.
    if (++visits.n > MAX_VISITS) return { depth, cost: LIMITS.maxCost + 1, aliases };
    if (sel.kind === 'Field') {
      // Every alias is one more execution of its field, `__typename` included.
      if (sel.alias) aliases++;
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
      const inner = sel.selectionSet ? walk(ctx, sel.selectionSet, child, level + 1, seenFragments, visits) : { depth: level, cost: 0, aliases: 0 };
      depth = Math.max(depth, inner.depth);
      cost += (1 + inner.cost) * (list ? LIMITS.listFactor : 1);
      aliases += inner.aliases;
    } else if (sel.kind === 'InlineFragment') {
      const typed = sel.typeCondition ? ctx.getSchema().getType(sel.typeCondition.name.value) ?? parent : parent;
      const inner = walk(ctx, sel.selectionSet, typed, level, seenFragments, visits);
      depth = Math.max(depth, inner.depth);
      cost += inner.cost;
      aliases += inner.aliases;
    } else {
      const name = sel.name.value;
      const fragment = ctx.getFragment(name);
      // A fragment cycle is reported by graphql's own NoFragmentCycles rule; here it only must not loop.
      if (!fragment || seenFragments.has(name)) continue;
      const typed = ctx.getSchema().getType(fragment.typeCondition.name.value) ?? parent;
      const inner = walk(ctx, fragment.selectionSet, typed, level, new Set(seenFragments).add(name), visits);
      depth = Math.max(depth, inner.depth);
      cost += inner.cost;
      aliases += inner.aliases;
    }
    // Past the limits the exact figure no longer matters; stop before a hostile query makes it huge.
    if (cost > LIMITS.maxCost * LIMITS.listFactor) break;
  }
  return { depth, cost, aliases };
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

/** One walk per operation and validation, shared by the rules below. */
const measured = new WeakMap<ValidationContext, Map<OperationDefinitionNode, Walk>>();

function measure(ctx: ValidationContext, op: OperationDefinitionNode): Walk {
  let perOp = measured.get(ctx);
  if (!perOp) measured.set(ctx, (perOp = new Map()));
  let result = perOp.get(op);
  if (!result) perOp.set(op, (result = walk(ctx, op.selectionSet, rootType(ctx, op), 1, new Set())));
  return result;
}

/** Rejects an operation nested deeper than LIMITS.maxDepth. */
const depthLimitRule: ValidationRule = (ctx: ValidationContext): ASTVisitor => ({
  OperationDefinition(op) {
    const { depth } = measure(ctx, op);
    if (depth > LIMITS.maxDepth) {
      ctx.reportError(limitError(`Query is too deep: depth ${depth} exceeds the limit of ${LIMITS.maxDepth}`, op));
    }
  },
});

/** Rejects an operation whose estimated cost exceeds LIMITS.maxCost. */
const costLimitRule: ValidationRule = (ctx: ValidationContext): ASTVisitor => ({
  OperationDefinition(op) {
    const { cost } = measure(ctx, op);
    if (cost > LIMITS.maxCost) {
      ctx.reportError(limitError(`Query is too complex: estimated cost exceeds the limit of ${LIMITS.maxCost}`, op));
    }
  },
});

/**
 * Rejects a document using more than LIMITS.maxAliases aliases. Counted over the
 * whole document, as the contract says, and per occurrence as it would execute: an alias inside a
 * fragment counts once for every spread of that fragment, so fragments cannot hide aliases.
 */
const aliasLimitRule: ValidationRule = (ctx: ValidationContext): ASTVisitor => {
  let aliases = 0;
  return {
    OperationDefinition(op) {
      aliases += measure(ctx, op).aliases;
    },
    Document: {
      leave() {
        if (aliases > LIMITS.maxAliases) {
          ctx.reportError(documentError(`Too many aliases: a document may use at most ${LIMITS.maxAliases}`, []));
        }
      },
    },
  };
};

/**
 * Rejects a document holding more than one account mutation, wherever they stand:
 * aliased, in fragments or inline fragments on Mutation, or in several operations of one document.
 * Counted by response key, so `{ login(...) { token } login(...) { user { id } } }`, which
 * graphql-js merges into one call, is one.
 */
const accountMutationLimitRule: ValidationRule = (ctx: ValidationContext): ASTVisitor => {
  const found: FieldNode[] = [];
  return {
    OperationDefinition(op) {
      if (op.operation !== 'mutation') return;
      const keys = new Set<string>();
      // Root fields only, so each fragment needs reading once (a spread repeated changes no key).
      const seen = new Set<string>();
      const visit = (set: SelectionSetNode) => {
        for (const sel of set.selections) {
          if (sel.kind === 'Field') {
            const key = sel.alias?.value ?? sel.name.value;
            if (ACCOUNT_MUTATIONS.has(sel.name.value) && !keys.has(key)) {
              keys.add(key);
              found.push(sel);
            }
          } else if (sel.kind === 'InlineFragment') {
            visit(sel.selectionSet);
          } else if (!seen.has(sel.name.value)) {
            seen.add(sel.name.value);
            const fragment = ctx.getFragment(sel.name.value);
            if (fragment) visit(fragment.selectionSet);
          }
        }
      };
      visit(op.selectionSet);
    },
    Document: {
      leave() {
        if (found.length > LIMITS.maxAccountMutations) {
          ctx.reportError(documentError(`Too many account mutations: a document may use at most ${LIMITS.maxAccountMutations}`, found));
        }
      },
    },
  };
};

function documentError(message: string, nodes: readonly ASTNode[]): GraphQLError {
  return new GraphQLError(message, { nodes, extensions: { code: 'BAD_USER_INPUT' } });
}

export const limitRules: ValidationRule[] = [depthLimitRule, costLimitRule, aliasLimitRule, accountMutationLimitRule];
