import {
  Kind,
  TypeInfo,
  ProvidedRequiredArgumentsRule,
  getNamedType,
  isEnumType,
  isRequiredArgument,
  validate,
  valueFromASTUntyped,
  visit,
  visitWithTypeInfo,
  type ASTNode,
  type DefinitionNode,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type GraphQLArgument,
  type GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { ApolloServerPlugin } from '@apollo/server';
import type { FieldError } from '../core/errors';
import type { Logger } from '../core/logger';
import { ARGUMENT_RULES } from './argument-rules';

/**
 * A wrong-typed, null or missing argument answers like REST does,
 * `Validation failed` + BAD_USER_INPUT + `extensions.errors: [{field, message}]`, instead of
 * graphql-js's own text.
 *
 * Why here, and not by declaring the arguments loosely (e.g. `JSON`) and letting zod decide in the
 * resolvers: the schema fixes the argument types (`title: String!`, `postId: Int!`), clients and
 * codegen rely on them, and graphql-js checks them before any resolver runs. So graphql-js keeps
 * refusing, and this plugin rewrites its refusals. It needs the parsed document (to know which
 * argument a literal or a `$variable` feeds) and the raw variables, which formatError does not
 * see; willSendResponse has both, plus the raw errors in the order of the formatted ones.
 * For each field with a refused argument, the field's zod schema (argument-rules.ts) runs over
 * all its raw arguments, so every problem REST would list is listed with REST's text; arguments
 * without a zod rule get a message from their GraphQL type.
 *
 * Because graphql-js refuses before execution, a wrong type is reported even to a caller who
 * would get 401 from the resolver (REST checks authentication first): the types are the schema's.
 */
export function argumentErrorsPlugin<T extends object>(log: Logger): ApolloServerPlugin<T> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse(rc) {
          const body = rc.response.body;
          if (body.kind !== 'single' || !rc.document || !rc.errors?.length) return;
          const formatted = body.singleResult.errors;
          if (!formatted || formatted.length !== rc.errors.length) return;
          try {
            const merged = mergeArgumentErrors(rc.schema, rc.document, rc.operation, rc.request.variables, rc.errors, formatted);
            if (merged) body.singleResult.errors = merged;
          } catch (err) {
            // The graphql-js answer is still a correct BAD_USER_INPUT: keep it rather than fail the request.
            log.error({ err }, 'graphql argument errors could not be rewritten');
          }
        },
      };
    },
  };
}

/** A field or directive with arguments, as used at one place of the document. */
interface Owner {
  node: FieldNode | DirectiveNode;
  /** `Mutation.createPost`, or `@include` for a directive. */
  key: string;
  args: readonly GraphQLArgument[];
}

interface Flag {
  owner: Owner;
  arg: string;
}


/** Replaces every argument error by one `Validation failed` error (first), the others kept as they are; null when none. */
function mergeArgumentErrors(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode | undefined,
  variables: Record<string, unknown> | undefined,
  raw: readonly GraphQLError[],
  formatted: readonly GraphQLFormattedError[],
): GraphQLFormattedError[] | null {
  // Request-level errors only: a resolver's errors carry a path and are formatted already.
  if (raw.every((e) => e.path)) return null;
  const index = indexArguments(schema, document, operation);
  let required: Set<string> | undefined;
  // graphql-js gives its validation errors no code: an error is the required-argument rule's when
  // that rule, run alone over the same document, reports it (same node, same message).
  const isMissingArgument = (error: GraphQLError) =>
    (required ??= new Set(validate(schema, document, [ProvidedRequiredArgumentsRule]).map(ruleKey))).has(ruleKey(error));
  const flagged = new Map<Owner, Set<string>>();
  const others: GraphQLFormattedError[] = [];
  let first: GraphQLFormattedError | undefined;
  raw.forEach((error, i) => {
    const flags = error.path ? [] : flagsOf(error, index, isMissingArgument);
    if (!flags.length) return others.push(formatted[i]);
    first ??= formatted[i];
    for (const { owner, arg } of flags) {
      if (!flagged.has(owner)) flagged.set(owner, new Set());
      flagged.get(owner)!.add(arg);
    }
  });
  if (!first) return null;
  const vars = variableValues(operation, variables);
  const errors: FieldError[] = [];
  for (const [owner, args] of flagged) {
    for (const e of fieldErrors(owner, args, vars)) if (!errors.some((x) => x.field === e.field && x.message === e.message)) errors.push(e);
  }
  const validation: GraphQLFormattedError = { message: 'Validation failed', ...(first.locations ? { locations: first.locations } : {}), extensions: { code: 'BAD_USER_INPUT', errors } };
  return [validation, ...others];
}

interface ArgumentIndex {
  owners: Map<ASTNode, Owner>;
  /** Every value node inside an argument → that argument. */
  values: Map<ASTNode, Flag>;
  /** Variable name → the arguments whose value uses it. */
  variables: Map<string, Flag[]>;
}

function indexArguments(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode | undefined): ArgumentIndex {
  const index: ArgumentIndex = { owners: new Map(), values: new Map(), variables: new Map() };
  const typeInfo = new TypeInfo(schema);
  const add = (node: FieldNode | DirectiveNode, key: string, args: readonly GraphQLArgument[]) => {
    const owner: Owner = { node, key, args };
    index.owners.set(node, owner);
    for (const argument of node.arguments ?? []) {
      const flag = { owner, arg: argument.name.value };
      visit(argument.value, {
        enter(value) {
          index.values.set(value, flag);
          if (value.kind === Kind.VARIABLE) {
            const list = index.variables.get(value.name.value) ?? [];
            list.push(flag);
            index.variables.set(value.name.value, list);
          }
        },
      });
    }
  };
  const scope: DocumentNode = { kind: Kind.DOCUMENT, definitions: operation ? reachable(document, operation) : document.definitions };
  visit(
    scope,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const parent = typeInfo.getParentType();
        const def = typeInfo.getFieldDef();
        if (parent && def) add(node, `${parent.name}.${def.name}`, def.args);
      },
      Directive(node) {
        const def = typeInfo.getDirective();
        if (def) add(node, `@${def.name}`, def.args);
      },
    }),
  );
  return index;
}

/** The operation and the fragments it spreads, transitively: a variable means nothing outside them. */
function reachable(document: DocumentNode, operation: OperationDefinitionNode): DefinitionNode[] {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const out: DefinitionNode[] = [operation];
  const seen = new Set<string>();
  for (let i = 0; i < out.length; i++) {
    visit(out[i], {
      FragmentSpread(spread) {
        const fragment = fragments.get(spread.name.value);
        if (fragment && !seen.has(fragment.name.value)) {
          seen.add(fragment.name.value);
          out.push(fragment);
        }
      },
    });
  }
  return out;
}

/** Which arguments one error refuses: none when it is about something else. */
function flagsOf(error: GraphQLError, index: ArgumentIndex, isMissingArgument: (error: GraphQLError) => boolean): Flag[] {
  const node = error.nodes?.length === 1 ? error.nodes[0] : undefined;
  if (!node) return [];
  // Variable coercion (execution): Apollo codes exactly these BAD_USER_INPUT; validation errors
  // about variables (unused, wrong position) are GRAPHQL_VALIDATION_FAILED and stay as they are.
  if (node.kind === Kind.VARIABLE_DEFINITION) {
    return error.extensions?.code === 'BAD_USER_INPUT' ? index.variables.get(node.variable.name.value) ?? [] : [];
  }
  // A literal of the wrong type (ValuesOfCorrectTypeRule reports the value node itself).
  const value = index.values.get(node);
  if (value) return [value];
  // A required argument left out (ProvidedRequiredArgumentsRule reports the field or directive,
  // once per missing argument): every required argument the node leaves out is flagged.
  const owner = index.owners.get(node);
  if (!owner || !isMissingArgument(error)) return [];
  return owner.args
    .filter((a) => isRequiredArgument(a) && !owner.node.arguments?.some((n) => n.name.value === a.name))
    .map((a) => ({ owner, arg: a.name }));
}

/** One validation error, by where it points and what it says. */
function ruleKey(error: GraphQLError): string {
  return JSON.stringify([error.message, error.nodes?.map((n) => n.loc?.start ?? -1) ?? []]);
}

/** The operation's variables as sent, defaults filled in (graphql-js would apply them too). */
function variableValues(operation: OperationDefinitionNode | undefined, variables: Record<string, unknown> | undefined): Record<string, unknown> {
  // No prototype: a variable may be called `__proto__`.
  const out: Record<string, unknown> = Object.create(null);
  for (const def of operation?.variableDefinitions ?? []) if (def.defaultValue) out[def.variable.name.value] = valueFromASTUntyped(def.defaultValue);
  for (const [name, value] of Object.entries(variables ?? {})) if (value !== undefined) out[name] = value;
  return out;
}

function fieldErrors(owner: Owner, flagged: Set<string>, vars: Record<string, unknown>): FieldError[] {
  // Only declared arguments: an unknown one is graphql-js's own error, and no REST body field.
  const raw: Record<string, unknown> = {};
  for (const arg of owner.args) {
    const node = owner.node.arguments?.find((a) => a.name.value === arg.name);
    const value = node ? valueFromASTUntyped(node.value, vars) : undefined;
    if (value !== undefined) raw[arg.name] = value;
  }
  const errors: FieldError[] = [];
  const rule = Object.hasOwn(ARGUMENT_RULES, owner.key) ? ARGUMENT_RULES[owner.key] : undefined;
  const parsed = rule?.safeParse(raw);
  if (parsed && !parsed.success) {
    for (const issue of parsed.error.issues) errors.push({ field: issue.path.length ? issue.path.join('.') : null, message: issue.message });
  }
  for (const arg of owner.args) {
    if (flagged.has(arg.name) && !errors.some((e) => e.field === arg.name)) errors.push({ field: arg.name, message: typeMessage(arg, raw[arg.name]) });
  }
  return errors;
}

/** Arguments that REST reads from the query string as positive integers: the same input, the same message there and here. */
const POSITIVE_INTS = new Set(['page', 'author']);

/** For arguments without a zod rule: what the GraphQL type expects, worded like the zod messages. */
function typeMessage(arg: GraphQLArgument, value: unknown): string {
  if (value === undefined) return `${arg.name} is required`;
  const type = getNamedType(arg.type);
  if (type.name === 'String' || type.name === 'ID') return `${arg.name} must be a string`;
  if (type.name === 'Int' && POSITIVE_INTS.has(arg.name)) return `${arg.name} must be a positive integer`;
  if (type.name === 'Int') return typeof value === 'number' && Number.isInteger(value) ? `${arg.name} must be a 32-bit integer` : `${arg.name} must be an integer`;
  if (type.name === 'Float') return `${arg.name} must be a number`;
  if (type.name === 'Boolean') return `${arg.name} must be true or false`;
  if (isEnumType(type)) return `${arg.name} must be one of ${type.getValues().map((v) => v.name).join(', ')}`;
  return `${arg.name} is invalid`;
}
