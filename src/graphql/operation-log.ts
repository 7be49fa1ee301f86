import type { ApolloServerPlugin } from '@apollo/server';
import { getOperationAST, type DocumentNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import { addLogFields, type RequestContext } from '../core/context';

/** Names come from the client's document: long ones are cut, and only so many fields are listed. */
const MAX_NAME = 64;
const MAX_FIELDS = 10;

const cut = (name: string) => (name.length > MAX_NAME ? name.slice(0, MAX_NAME) + '…' : name);

/**
 * Adds the GraphQL operation to the request's log line (src/http/logging.ts):
 * `operation` (its name, or null when anonymous), `operationType` and `rootFields` (the schema
 * names of its top-level fields, never aliases), so an anonymous `{ posts { ... } }` is still
 * recognisable. Taken from the parsed document even when validation refused it, so a refused
 * query shows what it tried; all null when the text did not parse. Never variables (they carry
 * passwords and tokens), never argument values.
 */
export function operationLogPlugin(): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ operation, document, request, contextValue }) {
          // contextValue is Apollo's shallow copy of the request's context: its logFields object is the request's.
          const op = operation ?? (document ? safeOperation(document, request.operationName) : null);
          addLogFields(contextValue, {
            operation: op?.name ? cut(op.name.value) : null,
            operationType: op?.operation ?? null,
            rootFields: op ? rootFields(document, op.selectionSet) : null,
          });
        },
      };
    },
  };
}

function safeOperation(document: DocumentNode, name: string | undefined | null): OperationDefinitionNode | null {
  // operationName is whatever the client sent (maybe not a string): only a string can name one.
  return getOperationAST(document, typeof name === 'string' ? name : undefined) ?? null;
}

function rootFields(document: DocumentNode | undefined, selectionSet: SelectionSetNode): string[] {
  const names = new Set<string>();
  const seen = new Set<string>();
  const visit = (set: SelectionSetNode) => {
    for (const sel of set.selections) {
      if (names.size >= MAX_FIELDS) return;
      if (sel.kind === 'Field') names.add(cut(sel.name.value));
      else if (sel.kind === 'InlineFragment') visit(sel.selectionSet);
      else if (!seen.has(sel.name.value)) {
        seen.add(sel.name.value);
        const fragment = document?.definitions.find((d) => d.kind === 'FragmentDefinition' && d.name.value === sel.name.value);
        if (fragment?.kind === 'FragmentDefinition') visit(fragment.selectionSet);
      }
    }
  };
  visit(selectionSet);
  return [...names];
}
