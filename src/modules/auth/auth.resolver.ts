import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../core/context';
import { MessageType } from '../../graphql/pagination.types';
import type { Services } from '../services';
import { UserType } from '../user/user.graphql';
import { presentUser, type UserView } from '../user/user.types';
import { AuthPayloadType, presentAuth, type AuthPayloadView } from './auth.graphql';
import { IF_MATCH } from '../../graphql/etags';
import { precondition } from '../../core/etag';

@Resolver()
export class AuthResolver {
  constructor(private readonly services: Services) {}

  @Query(() => UserType, { nullable: true, description: 'The authenticated user; null when anonymous.' })
  async me(@Ctx() ctx: RequestContext): Promise<UserView | null> {
    const user = await this.services.auth.me(ctx);
    return user ? presentUser(user) : null;
  }

  @Mutation(() => UserType, { description: 'The caller renames themselves.' })
  async updateMe(
    @Ctx() ctx: RequestContext,
    @Arg('name', () => String) name: string,
    @Arg('ifMatch', () => String, { nullable: true, description: IF_MATCH }) ifMatch?: string,
  ): Promise<UserView> {
    return this.services.auth.updateMe(ctx, { name }, this.pre(ifMatch), (_tx, user) => presentUser(user));
  }

  @Mutation(() => AuthPayloadType, { description: 'Revokes every token issued before; the payload carries a fresh one. A wrong current password counts as a failed login.' })
  async changePassword(
    @Ctx() ctx: RequestContext,
    @Arg('currentPassword', () => String) currentPassword: string,
    @Arg('password', () => String) password: string,
    @Arg('ifMatch', () => String, { nullable: true, description: IF_MATCH }) ifMatch?: string,
  ): Promise<AuthPayloadView> {
    return presentAuth(await this.services.auth.changePassword(ctx, { current_password: currentPassword, password }, this.pre(ifMatch)));
  }

  private pre(ifMatch: string | null | undefined) {
    return precondition(this.services.deps.config.requireIfMatch, ifMatch);
  }

  @Mutation(() => AuthPayloadType)
  async register(
    @Ctx() ctx: RequestContext,
    @Arg('name', () => String) name: string,
    @Arg('email', () => String) email: string,
    @Arg('password', () => String) password: string,
  ): Promise<AuthPayloadView> {
    return presentAuth(await this.services.auth.register(ctx, { name, email, password }));
  }

  @Mutation(() => AuthPayloadType)
  async login(@Ctx() ctx: RequestContext, @Arg('email', () => String) email: string, @Arg('password', () => String) password: string): Promise<AuthPayloadView> {
    return presentAuth(await this.services.auth.login(ctx, { email, password }));
  }

  @Mutation(() => MessageType, { description: 'Answers the same whether or not the email exists.' })
  async forgotPassword(@Ctx() ctx: RequestContext, @Arg('email', () => String) email: string): Promise<MessageType> {
    return { message: await this.services.auth.forgotPassword(ctx, { email }) };
  }

  @Mutation(() => MessageType)
  async resetPassword(@Ctx() ctx: RequestContext, @Arg('token', () => String) token: string, @Arg('password', () => String) password: string): Promise<MessageType> {
    return { message: await this.services.auth.resetPassword(ctx, { token, password }) };
  }

  @Mutation(() => MessageType)
  async verifyEmail(@Ctx() ctx: RequestContext, @Arg('token', () => String) token: string): Promise<MessageType> {
    return { message: await this.services.auth.verifyEmail(ctx, token) };
  }

  @Mutation(() => MessageType, { description: 'Emails a new verification link; at most 5 an hour.' })
  async resendVerification(@Ctx() ctx: RequestContext): Promise<MessageType> {
    return { message: await this.services.auth.resendVerification(ctx) };
  }
}
