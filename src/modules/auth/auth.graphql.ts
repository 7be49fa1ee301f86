import { Field, ObjectType } from 'type-graphql';
import { UserType } from '../user/user.graphql';
import { presentUser, type UserView } from '../user/user.types';
import type { AuthResult } from './auth.service';

export interface AuthPayloadView {
  user: UserView;
  token: string;
}

export function presentAuth(result: AuthResult): AuthPayloadView {
  return { user: presentUser(result.user), token: result.token };
}

@ObjectType('AuthPayload', { simpleResolvers: true })
export class AuthPayloadType implements AuthPayloadView {
  @Field(() => UserType) user!: UserView;
  @Field(() => String) token!: string;
}
