/**
 * The caller as every layer sees it. Defined here, below the feature modules, because the request
 * context (core/context.ts) carries it; the user module re-exports these names.
 */

export const ROLES = ['user', 'admin', 'moderator'] as const;
export type Role = (typeof ROLES)[number];

/**
 * What leaves the service about a user (never the password). The entity itself is never serialised.
 * Declared here, below the modules, for the request context; it is the user module's userShape's
 * view (user.types.ts), which the compiler holds to this declaration in both directions.
 */
export interface UserView {
  id: number;
  name: string;
  email: string;
  role: Role;
  emailVerifiedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The caller, as its bearer token's user row showed it at the request's first check
 * (auth.tokens.ts): a value, not a managed entity.
 */
export interface Actor extends UserView {
  tokenVersion: number;
}
